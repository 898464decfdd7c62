// The job secret: 128 random bits every connection presents before anything else.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace hoop {

struct Secret {
  std::array<uint8_t, 16> bytes{};

  static Secret random();
  // 32 hex digits; nullopt for anything else.
  static std::optional<Secret> fromHex(const std::string& hex);
  std::string toHex() const;
  bool isZero() const;
  // Constant time: the comparison does not reveal how many leading bytes matched.
  bool matches(const Secret& other) const;
};

}  // namespace hoop
