// A small stable hash for identities (hosts, jobs): the same on every machine and run.
#pragma once

#include <cstdint>
#include <string_view>

namespace hoop {

constexpr uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace hoop
