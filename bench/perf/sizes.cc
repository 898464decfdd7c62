#include "sizes.h"

#include <charconv>
#include <limits>

namespace hoop::perf {

std::optional<size_t> parseSize(std::string_view text) {
  size_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k': multiplier = size_t{1} << 10; break;
      case 'M':
      case 'm': multiplier = size_t{1} << 20; break;
      case 'G':
      case 'g': multiplier = size_t{1} << 30; break;
      default: break;
    }
  }
  if (multiplier != 1) text.remove_suffix(1);
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value > std::numeric_limits<size_t>::max() / multiplier) return std::nullopt;
  return value * multiplier;
}

std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor,
                              size_t stepBytes) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  std::vector<size_t> sizes;
  for (size_t size = minBytes; size <= maxBytes;) {
    sizes.push_back(size);
    size_t next = 0;
    if (stepFactor > 1) {
      if (size > kMax / stepFactor) break;
      next = size * stepFactor;
    } else {
      if (size > kMax - stepBytes) break;
      next = size + stepBytes;
    }
    if (next <= size) break;  // a step that does not grow (0 bytes, no step): one size only
    size = next;
  }
  return sizes;
}

}  // namespace hoop::perf
