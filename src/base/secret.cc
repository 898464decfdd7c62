#include "base/secret.h"

#include <sys/random.h>

#include <cerrno>

#include "base/error.h"

namespace hoop {

Secret Secret::random() {
  Secret secret;
  size_t filled = 0;
  while (filled < secret.bytes.size()) {
    ssize_t got = getrandom(secret.bytes.data() + filled, secret.bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(hoopSystemError, "getrandom: ", errnoText(errno));
    }
    filled += static_cast<size_t>(got);
  }
  return secret;
}

std::optional<Secret> Secret::fromHex(const std::string& hex) {
  if (hex.size() != 32) return std::nullopt;
  Secret secret;
  for (size_t i = 0; i < 16; ++i) {
    int value = 0;
    for (size_t j = 0; j < 2; ++j) {
      char c = hex[2 * i + j];
      int digit = (c >= '0' && c <= '9')   ? c - '0'
                  : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                           : -1;
      if (digit < 0) return std::nullopt;
      value = value * 16 + digit;
    }
    secret.bytes[i] = static_cast<uint8_t>(value);
  }
  return secret;
}

std::string Secret::toHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (uint8_t byte : bytes) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

bool Secret::isZero() const {
  uint8_t any = 0;
  for (uint8_t byte : bytes) any |= byte;
  return any == 0;
}

bool Secret::matches(const Secret& other) const {
  uint8_t difference = 0;
  for (size_t i = 0; i < bytes.size(); ++i) difference |= bytes[i] ^ other.bytes[i];
  // volatile keeps the compiler from turning the loop into an early-exit memcmp.
  volatile uint8_t result = difference;
  return result == 0;
}

}  // namespace hoop
