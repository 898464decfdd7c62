// File descriptors: UniqueFd owns one, Pipe owns both ends of a pipe, writeAll writes fully.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <utility>

namespace hoop::run {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  // close(2) errors are ignored: on Linux the fd is released even when close reports EINTR/EIO,
  // and retrying could close a descriptor another part of the program just opened.
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Both ends of a pipe(2), created close-on-exec so that no child inherits another rank's pipes
// (an inherited write end would keep the reader from ever seeing end-of-file).
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

// Throws std::system_error on failure.
Pipe makePipe();

// Writes all of `data` to `fd`, retrying on EINTR, short writes and EAGAIN (an inherited
// O_NONBLOCK terminal). Returns false on any other error (EPIPE when the reader went away).
bool writeAll(int fd, const char* data, size_t size);

}  // namespace hoop::run
