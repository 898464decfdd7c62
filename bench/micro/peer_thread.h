// The far end of a loopback benchmark, run on a second thread of the same process.
//
// The body loops until stopRequested(). The destructor requests the stop, runs `wake` (which
// must unblock a body sleeping in a system call, e.g. by shutting its socket down) and joins, so
// a benchmark that leaves early (an error, an exception) never leaves a thread behind nor hangs
// on one. An exception escaping the body is kept and shows as failed(), so the benchmark thread,
// which polls failed() while it waits, reports it instead of waiting forever for a reply.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <utility>

namespace hoop::micro {

class PeerThread {
 public:
  template <typename Body>
  PeerThread(Body body, std::function<void()> wake = {})
      : wake_(std::move(wake)), thread_([this, body = std::move(body)]() mutable {
          try {
            body(*this);
          } catch (const std::exception& e) {
            error_ = e.what();
            failed_.store(true, std::memory_order_release);  // publishes error_
          }
        }) {}
  PeerThread(const PeerThread&) = delete;
  PeerThread& operator=(const PeerThread&) = delete;
  ~PeerThread() {
    stop_.store(true, std::memory_order_relaxed);
    if (wake_) wake_();
    thread_.join();
  }

  // Relaxed: a flag polled in a loop; the join in the destructor orders everything else.
  bool stopRequested() const { return stop_.load(std::memory_order_relaxed); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // Meaningful once failed() returned true.
  const std::string& error() const { return error_; }

 private:
  // Declared before thread_: all of these exist before the body starts.
  std::function<void()> wake_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::string error_;
  std::thread thread_;
};

}  // namespace hoop::micro
