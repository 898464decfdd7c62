// A file descriptor as an RAII value: closed exactly once, by whoever owns it last.
#pragma once

#include <utility>

namespace hoop {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  explicit operator bool() const { return valid(); }
  // Closes the descriptor held (if any) and holds `fd`. close(2) errors are ignored: on Linux the
  // descriptor is released even when close reports EINTR or EIO, and retrying could close one
  // another thread has just opened.
  void reset(int fd = -1);
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace hoop
