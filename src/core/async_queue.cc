#include "core/async_queue.h"

#include <new>

#include "base/error.h"

namespace hoop {

AsyncQueue::AsyncQueue() : thread_([this] { run(); }) {}

AsyncQueue::~AsyncQueue() { stop(); }

void AsyncQueue::push(Work work, const std::string& context) {
  {
    std::lock_guard lock(mutex_);
    if (failure_ != hoopSuccess) fail(failure_, context, failureMessage_);
    if (closing_) fail(hoopInvalidUsage, context, "the communicator is being destroyed");
    pending_.push_back(std::move(work));
    ++queued_;
  }
  changed_.notify_all();
}

hoopResult_t AsyncQueue::status(std::string* message) const {
  std::lock_guard lock(mutex_);
  if (failure_ != hoopSuccess) {
    if (message != nullptr) *message = failureMessage_;
    return failure_;
  }
  return busy_ || !pending_.empty() ? hoopInProgress : hoopSuccess;
}

uint64_t AsyncQueue::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

hoopResult_t AsyncQueue::waitFor(uint64_t ticket, std::chrono::milliseconds limit,
                                 std::string* message) const {
  std::unique_lock lock(mutex_);
  auto settled = [&] { return finished_ >= ticket || failure_ != hoopSuccess || stopped_; };
  changed_.wait_for(lock, limit, settled);
  if (failure_ != hoopSuccess && ticket >= failedTicket_) {
    if (message != nullptr) *message = failureMessage_;
    return failure_;
  }
  if (finished_ >= ticket) return hoopSuccess;
  if (stopped_) {
    if (message != nullptr) *message = "the communicator was stopped before the operation ran";
    return hoopInvalidUsage;
  }
  return hoopInProgress;
}

void AsyncQueue::finish() { join(false); }

void AsyncQueue::stop() { join(true); }

void AsyncQueue::join(bool dropPending) {
  {
    std::unique_lock lock(mutex_);
    if (dropPending) pending_.clear();
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
}

void AsyncQueue::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return closing_ || !pending_.empty(); });
    if (pending_.empty()) return;  // closing, and nothing left to run
    Work work = std::move(pending_.front());
    pending_.pop_front();
    busy_ = true;
    lock.unlock();
    hoopResult_t code = hoopSuccess;
    std::string message;
    try {
      work();
    } catch (const Error& e) {
      code = e.code();
      message = e.what();
    } catch (const std::bad_alloc&) {
      code = hoopSystemError;
      message = "out of memory";
    } catch (const std::exception& e) {
      code = hoopInternalError;
      message = str("internal error: ", e.what());
    }
    work = nullptr;  // its captures go before the status says done
    lock.lock();
    busy_ = false;
    ++finished_;
    if (code != hoopSuccess && failure_ == hoopSuccess) {
      failure_ = code;
      failedTicket_ = finished_;
      failureMessage_ = std::move(message);
      // What was queued after it expected it to succeed (peers may be mid-transfer): drop it.
      pending_.clear();
    }
    lock.unlock();
    changed_.notify_all();
    lock.lock();
  }
}

}  // namespace hoop
