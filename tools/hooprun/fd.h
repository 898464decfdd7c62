// File descriptors: UniqueFd (base/unique_fd.h) owns one, Pipe owns both ends of a pipe,
// writeAll writes fully.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <utility>

#include "base/unique_fd.h"

namespace hoop::run {

using UniqueFd = hoop::UniqueFd;

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
