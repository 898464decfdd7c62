// How the spinning side of a loopback benchmark waits: poll without sleeping, but after a run of
// polls that moved nothing, yield the core once.
//
// Why yield at all: both ends of a loopback pair spin, so they need two free cores. On a machine
// with fewer (a 2-core CI box running other jobs), a pure spinner can burn its whole time slice
// while the thread it waits for sits in the run queue, and a round trip that takes microseconds
// measures milliseconds instead. A yield lets the waited-for thread run. It is not a sleep: the
// thread stays runnable, and with cores to spare it returns at once. hoop's own wait loop
// (Communicator::waitUntil) spins first and yields next for the same reason.
//
// kPollsBeforeYield is small on purpose: with a core to spare and nothing else runnable, a yield
// is one cheap system call that returns at once (progress() itself makes one per poll), so it
// costs an idle machine almost nothing; on a busy one every poll spent waiting for a descheduled
// peer is wasted: on a loaded machine, 256 polls before a yield made a small message's one-way
// trip several times slower than 16.
#pragma once

#include <thread>

namespace hoop::micro {

class SpinWait {
 public:
  static constexpr int kPollsBeforeYield = 16;

  // Call after each poll; `moved` says whether it made progress.
  void afterPoll(bool moved) {
    if (moved) {
      idlePolls_ = 0;
    } else if (++idlePolls_ >= kPollsBeforeYield) {
      idlePolls_ = 0;
      std::this_thread::yield();
    }
  }

 private:
  int idlePolls_ = 0;
};

}  // namespace hoop::micro
