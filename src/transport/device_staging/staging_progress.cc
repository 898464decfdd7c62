#include "transport/device_staging/staging_progress.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "base/clock.h"

namespace hoop {
namespace {

// How long the thread spins on the flags after the last piece moved before it sleeps in poll,
// and how long such a sleep lasts: a stream's flag write wakes no descriptor.
constexpr auto kSpin = std::chrono::microseconds(200);
constexpr int kPendingPollMs = 1;
constexpr int kIdlePollMs = 100;

}  // namespace

StagingProgress::StagingProgress(std::function<void(const Error&)> onFailure)
    : onFailure_(std::move(onFailure)), wakeFd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (!wakeFd_) fail(hoopSystemError, "eventfd for the staged device messages: ", errnoText(errno));
  thread_ = std::thread([this] { run(); });
}

StagingProgress::~StagingProgress() { stop(); }

void StagingProgress::add(StagedDeviceConnection& connection) {
  {
    std::lock_guard lock(mutex_);
    connections_.push_back(&connection);
  }
  wake();
}

void StagingProgress::wake() {
  const uint64_t one = 1;
  // A full counter already wakes the thread: nothing to do when the write fails.
  [[maybe_unused]] const ssize_t written = ::write(wakeFd_.get(), &one, sizeof(one));
}

void StagingProgress::stop() {
  if (stopping_.exchange(true)) return;
  wake();
  thread_.join();
  std::lock_guard lock(mutex_);
  connections_.clear();
}

bool StagingProgress::advanceAll(bool& pending) {
  bool moved = false;
  pending = false;
  std::lock_guard lock(mutex_);
  for (StagedDeviceConnection* connection : connections_) {
    moved |= connection->advance();
    pending |= connection->hasPendingPieces();
  }
  return moved;
}

void StagingProgress::run() {
  auto lastMoved = Clock::now();
  std::vector<pollfd> fds;
  while (!stopping_.load(std::memory_order_acquire)) {
    bool pending = false;
    try {
      if (advanceAll(pending)) {
        lastMoved = Clock::now();
        continue;
      }
    } catch (const Error& error) {
      onFailure_(error);
      // The watch releases the streams; nothing here moves again.
      while (!stopping_.load(std::memory_order_acquire)) {
        pollfd waiting{wakeFd_.get(), POLLIN, 0};
        ::poll(&waiting, 1, kIdlePollMs);
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t got = ::read(wakeFd_.get(), &count, sizeof(count));
      }
      return;
    }
    if (pending && Clock::now() - lastMoved < kSpin) continue;
    fds.clear();
    fds.push_back({wakeFd_.get(), POLLIN, 0});
    {
      std::lock_guard lock(mutex_);
      for (StagedDeviceConnection* connection : connections_) connection->addLinkWaitFds(fds);
    }
    ::poll(fds.data(), fds.size(), pending ? kPendingPollMs : kIdlePollMs);
    if (fds[0].revents & POLLIN) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t got = ::read(wakeFd_.get(), &count, sizeof(count));
    }
  }
}

}  // namespace hoop
