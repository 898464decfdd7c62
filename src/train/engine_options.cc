// EngineOptions::fromEnvironment: Horovod's knobs under hoop's names.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "hoop/train.hpp"

namespace hoop::train {
namespace {

// The variable's value as a non-negative number, or `fallback` when unset. A value that does not
// parse is an error rather than a silent default: a typo in a tuning knob should be visible.
double numberFromEnvironment(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || text[0] == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(value >= 0)) {
    throw Exception(hoopInvalidArgument,
                    std::string(name) + "='" + text + "' is not a non-negative number");
  }
  return value;
}

}  // namespace

EngineOptions EngineOptions::fromEnvironment() {
  EngineOptions options;
  options.fusionThresholdBytes = static_cast<size_t>(numberFromEnvironment(
      "HOOP_FUSION_THRESHOLD", static_cast<double>(options.fusionThresholdBytes)));
  options.cycleTimeMs = numberFromEnvironment("HOOP_CYCLE_TIME", options.cycleTimeMs);
  options.stallTimeoutSeconds =
      numberFromEnvironment("HOOP_STALL_CHECK_TIME", options.stallTimeoutSeconds);
  options.cacheCapacity = static_cast<size_t>(
      numberFromEnvironment("HOOP_CACHE_CAPACITY", static_cast<double>(options.cacheCapacity)));
  return options;
}

}  // namespace hoop::train
