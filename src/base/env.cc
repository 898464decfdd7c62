#include "base/env.h"

#include <cerrno>
#include <cstdlib>

#include "base/error.h"

namespace hoop {

std::optional<std::string> envString(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

long long envInt(const char* name, long long fallback) {
  auto text = envString(name);
  if (!text) return fallback;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text->c_str(), &end, 10);
  if (errno != 0 || end == text->c_str() || *end != '\0') {
    fail(hoopInvalidArgument, name, "='", *text, "' is not an integer");
  }
  return value;
}

std::chrono::milliseconds envSeconds(const char* name, double fallbackSeconds) {
  double seconds = fallbackSeconds;
  if (auto text = envString(name)) {
    char* end = nullptr;
    seconds = std::strtod(text->c_str(), &end);
    if (end == text->c_str() || *end != '\0') {
      fail(hoopInvalidArgument, name, "='", *text, "' is not a number of seconds");
    }
  }
  // "No limit" is a week: long enough to never fire, short enough to not overflow clocks.
  if (seconds <= 0) return std::chrono::hours(24 * 7);
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

std::optional<size_t> parseByteSize(const std::string& text) {
  // strtoull alone would take " -1" (leading space, then a sign) as 2^64 - 1.
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str()) return std::nullopt;
  std::string suffix(end);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M" || suffix == "m")
    shift = 20;
  else if (suffix == "G" || suffix == "g")
    shift = 30;
  else if (!suffix.empty())
    return std::nullopt;
  if (shift != 0 && value > (~0ULL >> shift)) return std::nullopt;
  return static_cast<size_t>(value << shift);
}

}  // namespace hoop
