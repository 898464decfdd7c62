// fp16 and bf16 computed from the format definitions (sign, biased exponent, mantissa) with
// ldexp/frexp in double: the independent reference the conversion and reduction tests compare
// against. Deliberately slow and obvious; shares nothing with src/base/half.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace hoop::reference {

struct SmallFloatFormat {
  int exponentBits;
  int mantissaBits;
  int bias() const { return (1 << (exponentBits - 1)) - 1; }
  int maxField() const { return (1 << exponentBits) - 1; }
};
inline constexpr SmallFloatFormat kHalfFormat{5, 10};
inline constexpr SmallFloatFormat kBf16Format{8, 7};

inline double decodeSmallFloat(uint16_t bits, SmallFloatFormat f) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int field = (bits >> f.mantissaBits) & f.maxField();
  const int mantissa = bits & ((1 << f.mantissaBits) - 1);
  if (field == f.maxField()) {
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  }
  if (field == 0) return sign * std::ldexp(mantissa, 1 - f.bias() - f.mantissaBits);
  return sign * std::ldexp((1 << f.mantissaBits) + mantissa, field - f.bias() - f.mantissaBits);
}

// The bit pattern of v if v is exactly representable (finite, or infinite), else nullopt.
inline std::optional<uint16_t> encodeExactSmallFloat(double v, SmallFloatFormat f) {
  if (std::isnan(v)) return std::nullopt;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  if (std::isinf(a)) return static_cast<uint16_t>(sign | (f.maxField() << f.mantissaBits));
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): unbiased exponent e - 1
  const int minExponent = 1 - f.bias();
  const int exponent = std::max(e - 1, minExponent);
  const double scaled = std::ldexp(a, f.mantissaBits - exponent);  // integer if representable
  if (scaled != std::floor(scaled)) return std::nullopt;
  const auto significand = static_cast<int64_t>(scaled);
  const int64_t implicit = int64_t{1} << f.mantissaBits;
  if (e - 1 < minExponent) {  // subnormal
    return static_cast<uint16_t>(sign | significand);
  }
  const int field = exponent + f.bias();
  if (field >= f.maxField() || significand < implicit || significand >= 2 * implicit) {
    return std::nullopt;
  }
  return static_cast<uint16_t>(sign | (field << f.mantissaBits) | (significand - implicit));
}

// The nearest value of the format to v (ties to even), as bits; beyond the largest finite value
// rounds to infinity. v must not be NaN. The significand is counted in units of the smallest
// subnormal step at v's exponent, so subnormals, the first normal binade and the carry of a
// round-up into the next binade (or into infinity) all come out of one formula.
inline uint16_t roundToSmallFloat(double v, SmallFloatFormat f) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  const uint16_t inf = static_cast<uint16_t>(f.maxField() << f.mantissaBits);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);
  const int minExponent = 1 - f.bias();
  const int exponent = std::max(e - 1, minExponent);
  const double units = std::nearbyint(std::ldexp(a, f.mantissaBits - exponent));  // ties to even
  const double bits = std::ldexp(exponent - minExponent, f.mantissaBits) + units;
  if (bits >= inf) return sign | inf;
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(bits));
}

inline double halfValue(uint16_t h) { return decodeSmallFloat(h, kHalfFormat); }
inline double bf16Value(uint16_t b) { return decodeSmallFloat(b, kBf16Format); }
inline std::optional<uint16_t> exactHalf(double v) { return encodeExactSmallFloat(v, kHalfFormat); }
inline std::optional<uint16_t> exactBf16(double v) { return encodeExactSmallFloat(v, kBf16Format); }

inline bool isHalfNaN(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }
inline bool isBf16NaN(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

}  // namespace hoop::reference
