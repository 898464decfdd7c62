// LineRelay: turns the byte stream of one rank's stdout or stderr into whole lines prefixed with
// "[rank] ". hooprun writes what it returns with one write(2) from a single thread, so lines of
// different ranks never interleave mid-line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hoop::run {

class LineRelay {
 public:
  // A line longer than `max_line` bytes is cut into pieces of that size, each printed as a line
  // of its own, so a rank that never prints a newline cannot make hooprun buffer without bound.
  static constexpr size_t kDefaultMaxLine = 64 * 1024;

  explicit LineRelay(size_t rank, size_t max_line = kDefaultMaxLine);

  // Takes bytes read from the rank; returns the complete lines among them (and the buffered
  // start of the first one), prefixed and newline-terminated. Empty when no line completed.
  std::string feed(std::string_view bytes);

  // The rank is gone: returns its unterminated last line, prefixed and with a newline added so
  // that the next line printed starts clean; empty when nothing is pending.
  std::string finish();

 private:
  std::string prefix_;
  size_t max_line_;
  std::string partial_;  // bytes after the last newline seen
};

}  // namespace hoop::run
