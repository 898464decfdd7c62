#include "hooprun/line_relay.h"

namespace hoop::run {

LineRelay::LineRelay(size_t rank, size_t max_line)
    : prefix_("[" + std::to_string(rank) + "] "), max_line_(max_line > 0 ? max_line : 1) {}

std::string LineRelay::feed(std::string_view bytes) {
  std::string out;
  // Invariant: partial_ holds at most max_line_ bytes. A line of exactly max_line_ bytes waits for
  // its newline, so it is not followed by a spurious empty line.
  while (!bytes.empty()) {
    size_t room = max_line_ - partial_.size();
    size_t newline = bytes.find('\n');
    if (newline != std::string_view::npos && newline <= room) {
      out += prefix_;
      out += partial_;
      out.append(bytes.data(), newline + 1);
      partial_.clear();
      bytes.remove_prefix(newline + 1);
    } else if (bytes.size() <= room) {
      partial_.append(bytes);  // no newline in bytes: it would have been within room
      bytes = {};
    } else {
      // The line outgrew max_line_ bytes: print what fits as a line of its own.
      partial_.append(bytes.data(), room);
      bytes.remove_prefix(room);
      out += prefix_;
      out += partial_;
      out += '\n';
      partial_.clear();
    }
  }
  return out;
}

std::string LineRelay::finish() {
  if (partial_.empty()) return {};
  std::string out = prefix_ + partial_ + '\n';
  partial_.clear();
  return out;
}

}  // namespace hoop::run
