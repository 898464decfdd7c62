// What the multi-process test workers share: how a rank fails, and the communicator id the test
// hands its ranks in HOOP_TEST_UID.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hoop/hoop.h"

namespace hoop::test {

// "FAIL rank R: message" on stderr and exit status 1: what the tests look for in a failed rank.
[[noreturn]] inline void failRank(int rank, const std::string& message) {
  std::fprintf(stderr, "FAIL rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  std::exit(1);
}

// The id HOOP_TEST_UID spells in hex; a missing or malformed one fails `rank`.
inline hoopUniqueId testUniqueId(int rank) {
  const char* hex = std::getenv("HOOP_TEST_UID");
  hoopUniqueId id{};
  if (hex == nullptr || std::strlen(hex) != 2 * sizeof(id.internal)) {
    failRank(rank, "bad HOOP_TEST_UID");
  }
  for (size_t i = 0; i < sizeof(id.internal); ++i) {
    id.internal[i] = static_cast<char>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  }
  return id;
}

}  // namespace hoop::test
