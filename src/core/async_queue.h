// The thread of a non-blocking communicator: runs the work queued on it one piece at a time, in
// the order it was queued, and keeps how that went for hoopCommGetAsyncError. Blocking
// communicators have none, so their calls pay for nothing here.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "hoop/hoop.h"

namespace hoop {

class AsyncQueue {
 public:
  // A piece of work; it reports failure by throwing (hoop::Error carries the code).
  using Work = std::function<void()>;

  AsyncQueue();
  // Drops what has not started and joins the thread (see stop()).
  ~AsyncQueue();
  AsyncQueue(const AsyncQueue&) = delete;
  AsyncQueue& operator=(const AsyncQueue&) = delete;

  // Queues `work`. Once a piece has failed nothing more runs: this throws that failure instead,
  // `context` put before its message.
  void push(Work work, const std::string& context);

  // hoopInProgress while anything queued has not finished; then hoopSuccess, or the first
  // failure's code with its message in *message.
  hoopResult_t status(std::string* message) const;

  // How many pieces were queued so far: the ticket of the last one (the first piece is 1).
  uint64_t queued() const;
  // Waits at most `limit` for the pieces up to `ticket` to have run: hoopSuccess once they have,
  // hoopInProgress while they have not, and a failure (its message in *message) when one of them
  // failed or the queue dropped them. Pieces before a failed one report success.
  hoopResult_t waitFor(uint64_t ticket, std::chrono::milliseconds limit,
                       std::string* message) const;

  // Waits for everything queued to finish (or for a failure to drop the rest), then joins.
  void finish();
  // Drops everything not started, waits for the running piece (the caller makes it return
  // soon: Communicator::requestAbort), then joins.
  void stop();

 private:
  void run();
  void join(bool dropPending);

  mutable std::mutex mutex_;
  // Told when work is queued, when a piece ends and when the thread is gone.
  mutable std::condition_variable changed_;
  std::deque<Work> pending_;
  bool busy_ = false;  // a piece is running
  bool closing_ = false;
  bool stopped_ = false;   // the thread is gone: nothing queued will run any more
  uint64_t queued_ = 0;    // pieces queued so far
  uint64_t finished_ = 0;  // pieces that ran (the failed one included), in order
  uint64_t failedTicket_ = 0;
  hoopResult_t failure_ = hoopSuccess;
  std::string failureMessage_;
  std::thread thread_;  // last: it starts once the members above exist
};

}  // namespace hoop
