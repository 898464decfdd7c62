// The host thread that moves a communicator's staged device messages (staged_connection.h):
// it watches the staging flags the streams write, sends and receives the staged pieces over
// their links, and hands the slots back. One per communicator that has ranks on other hosts.
//
// It spins while pieces are pending (a stream waits on it), sleeping in poll on the links for at
// most a millisecond at a time, since a flag written by a stream wakes no descriptor; with
// nothing pending it sleeps until wake(). A link's error (a peer gone, another call's frame)
// stops it and goes to `onFailure`, once.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/unique_fd.h"
#include "transport/device_staging/staged_connection.h"

namespace hoop {

class StagingProgress {
 public:
  explicit StagingProgress(std::function<void(const Error&)> onFailure);
  ~StagingProgress();
  StagingProgress(const StagingProgress&) = delete;
  StagingProgress& operator=(const StagingProgress&) = delete;

  // Starts moving `connection`'s pieces (it must outlive stop()).
  void add(StagedDeviceConnection& connection);
  // New pieces were queued.
  void wake();
  // Ends the thread; before the connections go.
  void stop();

 private:
  void run();
  bool advanceAll(bool& pending);

  std::function<void(const Error&)> onFailure_;
  UniqueFd wakeFd_;  // an eventfd
  std::mutex mutex_;
  std::vector<StagedDeviceConnection*> connections_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace hoop
