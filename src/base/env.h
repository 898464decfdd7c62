// Reading HOOP_* settings from the environment, with errors that name the variable.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace hoop {

std::optional<std::string> envString(const char* name);
// Integer value of `name`, or `fallback` when unset; garbage is hoopInvalidArgument naming it.
long long envInt(const char* name, long long fallback);
// Seconds (fractions allowed) as a duration; 0 or negative means "no limit" (a very long one).
std::chrono::milliseconds envSeconds(const char* name, double fallbackSeconds);
// Parses "512K", "4M", "1G" (powers of 1024) or a plain byte count.
std::optional<size_t> parseByteSize(const std::string& text);

}  // namespace hoop
