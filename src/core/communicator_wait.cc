// Communicator: how a rank waits for its peers. Spin on progress, offer the core, then sleep
// in the kernel until a socket or a shared-memory word moves; every wait honours the operation's
// deadline, the failure watch and hoopCommAbort.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "core/communicator.h"
#include "transport/shm/futex.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HOOP_CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
// YIELD: the spin-wait hint, telling an SMT core to favour its sibling (a no-op on most cores).
#define HOOP_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define HOOP_CPU_RELAX() ((void)0)
#endif

namespace hoop {

void Communicator::beginOperation(OpKind kind, uint32_t seq, size_t count, DataType type,
                                  const CallParams& call) {
  watch_.begin({kind, seq, count, type}, call);
  // The clock starts at the first wait that does not end at once (see deadline()): a small
  // operation that never waits long reads the clock no more than it must.
  deadline_ = kNoDeadlineYet;
}

Clock::time_point Communicator::deadline() {
  if (deadline_ == kNoDeadlineYet) deadline_ = Clock::now() + config_.opTimeout;
  return deadline_;
}

void Communicator::progressAll(bool& moved) {
  for (Connection* c : active_) moved |= c->progress();
}

void Communicator::waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) {
  // The answer is often less than a microsecond away, and reading the clock is not free (tens of
  // nanoseconds in a VM, where it was half of a small allreduce's time): spin on progress alone
  // and read the clock once every kRoundsPerClockRead rounds.
  constexpr unsigned kRoundsPerClockRead = 32;
  const bool spinFirst = config_.spinBeforeSleep.count() > 0;
  constexpr Clock::time_point kNotYet = Clock::time_point::min();
  Clock::time_point spinUntil = kNotYet;  // set at the first clock read of a spin
  // Past spinning: every pass snapshots the shm words first, so a sleep cannot miss a wake-up.
  bool resting = !spinFirst;
  unsigned rounds = 0;
  int yields = 0;
  while (true) {
    if (resting) snapshotWaitWords();
    bool moved = false;
    progressAll(moved);
    if (done()) return;
    if (abortRequested()) {
      fail(hoopInvalidUsage, "rank ", rank_, ": ", operation(), " was aborted (hoopCommAbort)");
    }
    if (moved) {
      spinUntil = kNotYet;
      resting = !spinFirst;
      rounds = 0;
      yields = 0;
      continue;
    }
    if (!resting && ++rounds % kRoundsPerClockRead != 0) {
      HOOP_CPU_RELAX();  // one pause: on some cores it costs ~100 cycles, and it adds to latency
      continue;
    }
    const auto now = Clock::now();
    if (now >= deadline()) watch_.timedOut(waitingFor);
    if (watch_.checkDue(now)) watch_.check(now, waitingFor);
    // Spin first, then give the core to others (ranks may outnumber cores), then sleep in the
    // kernel until something can move.
    if (!resting) {
      if (spinUntil == kNotYet) spinUntil = now + config_.spinBeforeSleep;
      if (now < spinUntil) {
        // Offer the core at every clock read: the kernel sometimes runs two ranks on one core
        // for a while even when there are cores enough, and a rank that spun without yielding
        // would then hold its peer off the core for the whole spin, many times a call's time
        // (docs/design-notes.md, HOOP_SPIN_US). With nothing else to run, a yield is a system
        // call and the spin goes on.
        std::this_thread::yield();
        continue;
      }
      resting = true;  // one more pass, with the words snapshotted, before yielding
      continue;
    }
    if (yields < 4) {
      ++yields;
      std::this_thread::yield();
      continue;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - now).count();
    sleepUntilActivity(static_cast<int>(std::clamp<long long>(left, 1, 100)));
    // Woken: something probably moves now; spin a little before resting again.
    spinUntil = Clock::now() + config_.spinBeforeSleep / 4;
    resting = !spinFirst;
    rounds = 0;
  }
}

void Communicator::snapshotWaitWords() {
  // A shared-memory peer wakes a sleeper only if the word moved after this load; so load it
  // before looking for work, and sleep only if it still holds this value.
  wordSnapshot_.clear();
  for (Connection* c : active_) {
    if (const auto* word = c->waitWord(); word != nullptr && !c->idle()) {
      wordSnapshot_.push_back({word, word->load(std::memory_order_acquire)});
    }
  }
}

void Communicator::sleepUntilActivity(int timeoutMs) {
  pollFds_.clear();
  pollFds_.push_back({wakeup_.get(), POLLIN, 0});
  // For shm connections this announces the sleeper, so the peer's next publish wakes it.
  for (Connection* c : active_) c->addWaitFds(pollFds_);
  if (!wordSnapshot_.empty() && pollFds_.size() == 1) {
    // Only shared memory to wait for: sleep on its words. The abort cannot wake a futex, so
    // sleep in slices short enough for hoopCommAbort's 100 ms promise.
    const auto slice = std::chrono::milliseconds(std::min(timeoutMs, 20));
    if (wordSnapshot_.size() == 1) {
      futexWaitShared(*wordSnapshot_.front().word, wordSnapshot_.front().expected, slice);
      return;
    }
    if (futexWaitAnyShared(wordSnapshot_, slice) || errno != ENOSYS) return;
    // A kernel without futex_waitv: fall through to short polls.
  }
  // Sockets and shm words together (or no futex_waitv): poll the sockets, and while shm work
  // is pending wake every millisecond to look at it.
  if (!wordSnapshot_.empty()) timeoutMs = 1;
  if (::poll(pollFds_.data(), pollFds_.size(), timeoutMs) < 0 && errno != EINTR) {
    fail(hoopSystemError, "rank ", rank_, ": poll: ", errnoText(errno));
  }
}

bool Communicator::allSendsCompleted() const {
  for (const Connection* c : active_) {
    if (c->sendsCompleted() != c->sendsPosted()) return false;
  }
  return true;
}

void Communicator::requestAbort() {
  abort_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (write(wakeup_.get(), &one, sizeof(one)) < 0) {
    // The flag alone still stops every wait within its 100 ms poll slice.
  }
}

}  // namespace hoop
