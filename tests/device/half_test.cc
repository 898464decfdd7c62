// fp16 / bf16 conversions against values computed independently from the format definitions
// (reference_formats.h: sign, exponent, mantissa, ldexp in double), never from the code under
// test.
#include "base/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "reference_formats.h"

namespace hoop {
namespace {

using reference::bf16Value;
using reference::halfValue;
using reference::isBf16NaN;
using reference::isHalfNaN;

bool isQuietHalfNaN(uint16_t h) { return isHalfNaN(h) && (h & 0x200) != 0; }
bool isQuietBf16NaN(uint16_t b) { return isBf16NaN(b) && (b & 0x40) != 0; }
bool isQuietFloatNaN(float f) {
  return std::isnan(f) && (std::bit_cast<uint32_t>(f) & 0x00400000u) != 0;
}

float fromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

constexpr float kInf = std::numeric_limits<float>::infinity();

// Usable in constant expressions.
static_assert(halfToFloat(0x3c00) == 1.0f);
static_assert(floatToHalf(-2.0f) == 0xc000);
static_assert(bf16ToFloat(0x3f80) == 1.0f);
static_assert(floatToBf16(0.5f) == 0x3f00);

TEST(HalfTest, AllBitPatternsDecodeExactlyAndRoundTrip) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    const float f = halfToFloat(h);
    if (isHalfNaN(h)) {
      EXPECT_TRUE(isQuietFloatNaN(f)) << std::hex << "half 0x" << i;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << "half 0x" << i;
      const uint16_t back = floatToHalf(f);
      EXPECT_TRUE(isQuietHalfNaN(back)) << std::hex << "half 0x" << i << " -> 0x" << back;
      // Quieting sets one bit; sign and payload survive.
      EXPECT_EQ(back, h | 0x200) << std::hex << "half 0x" << i;
      continue;
    }
    const double expected = halfValue(h);
    EXPECT_EQ(static_cast<double>(f), expected) << std::hex << "half 0x" << i;
    EXPECT_EQ(std::signbit(f), std::signbit(expected)) << std::hex << "half 0x" << i;
    EXPECT_EQ(floatToHalf(f), h) << std::hex << "half 0x" << i;
  }
}

TEST(HalfTest, AllBf16BitPatternsDecodeExactlyAndRoundTrip) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float f = bf16ToFloat(b);
    if (isBf16NaN(b)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << "bf16 0x" << i;
      EXPECT_EQ(floatToBf16(f), b | 0x40) << std::hex << "bf16 0x" << i;
      continue;
    }
    const double expected = bf16Value(b);
    EXPECT_EQ(static_cast<double>(f), expected) << std::hex << "bf16 0x" << i;
    EXPECT_EQ(std::signbit(f), std::signbit(expected)) << std::hex << "bf16 0x" << i;
    EXPECT_EQ(floatToBf16(f), b) << std::hex << "bf16 0x" << i;
  }
}

// Every rounding boundary of the format: for each pair of neighbours (h, h + 1) the midpoint is a
// tie (goes to the even one) and the floats just below and above it go down and up. h + 1 =
// 0x7c00 (inf) stands for 2^16 here, the next value the exponent range would have.
TEST(HalfTest, EveryRoundingBoundaryIsNearestEven) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = halfValue(static_cast<uint16_t>(h));
    const double hi = h + 1 == 0x7c00 ? 65536.0 : halfValue(static_cast<uint16_t>(h + 1));
    const double midpoint = (lo + hi) / 2;
    const auto mid = static_cast<float>(midpoint);
    ASSERT_EQ(static_cast<double>(mid), midpoint);  // 12 significant bits: exact in fp32
    const uint32_t even = (h & 1) ? h + 1 : h;
    for (const uint32_t sign : {0u, 0x8000u}) {
      const float s = sign ? -1.0f : 1.0f;
      EXPECT_EQ(floatToHalf(s * mid), even | sign) << std::hex << "h 0x" << h;
      EXPECT_EQ(floatToHalf(s * std::nextafter(mid, 0.0f)), h | sign) << std::hex << "h 0x" << h;
      EXPECT_EQ(floatToHalf(s * std::nextafter(mid, kInf)), (h + 1) | sign)
          << std::hex << "h 0x" << h;
    }
  }
}

TEST(HalfTest, EveryBf16RoundingBoundaryIsNearestEven) {
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const double lo = bf16Value(static_cast<uint16_t>(b));
    const double hi =
        b + 1 == 0x7f80 ? std::ldexp(1.0, 128) : bf16Value(static_cast<uint16_t>(b + 1));
    const double midpoint = (lo + hi) / 2;
    const auto mid = static_cast<float>(midpoint);
    ASSERT_EQ(static_cast<double>(mid), midpoint);
    const uint32_t even = (b & 1) ? b + 1 : b;
    for (const uint32_t sign : {0u, 0x8000u}) {
      const float s = sign ? -1.0f : 1.0f;
      EXPECT_EQ(floatToBf16(s * mid), even | sign) << std::hex << "b 0x" << b;
      EXPECT_EQ(floatToBf16(s * std::nextafter(mid, 0.0f)), b | sign) << std::hex << "b 0x" << b;
      EXPECT_EQ(floatToBf16(s * std::nextafter(mid, kInf)), (b + 1) | sign)
          << std::hex << "b 0x" << b;
    }
  }
}

TEST(HalfTest, HandPickedHalfRounding) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);      // tie, 0x3c00 is even
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);  // tie, 0x3c02 is even
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-23f), 0x3c01);
  EXPECT_EQ(floatToHalf(2049.0f), 0x6800);  // 2048, tie to even
  EXPECT_EQ(floatToHalf(2051.0f), 0x6802);  // 2052, tie to even
  EXPECT_EQ(floatToHalf(-2051.0f), 0xe802);
  EXPECT_EQ(floatToHalf(0.1f), 0x2e66);
  // Top of the range and overflow.
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.996f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // tie between 65504 (odd) and 2^16: inf
  EXPECT_EQ(floatToHalf(-65520.0f), 0xfc00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  // Subnormals and underflow.
  EXPECT_EQ(floatToHalf(0x1p-14f), 0x0400);             // smallest normal
  EXPECT_EQ(floatToHalf(0x1p-14f - 0x1p-25f), 0x0400);  // tie between 0x3ff (odd) and 0x400
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);             // smallest subnormal
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);             // tie between 0 (even) and 1
  EXPECT_EQ(floatToHalf(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);  // 1.5 ulp: tie to even 2
  EXPECT_EQ(floatToHalf(5 * 0x1p-25f), 0x0002);  // 2.5 ulp: tie to even 2
  EXPECT_EQ(floatToHalf(-0x1p-24f), 0x8001);
  EXPECT_EQ(floatToHalf(-0x1p-26f), 0x8000);  // underflows to -0, keeps the sign
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::min()), 0x0000);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x8200), -512 * 0x1p-24f);
}

TEST(HalfTest, HandPickedBf16Rounding) {
  EXPECT_EQ(floatToBf16(fromBits(0x3f808000)), 0x3f80);  // tie, 0x3f80 is even
  EXPECT_EQ(floatToBf16(fromBits(0x3f818000)), 0x3f82);  // tie, 0x3f82 is even
  EXPECT_EQ(floatToBf16(fromBits(0x3f808001)), 0x3f81);
  EXPECT_EQ(floatToBf16(fromBits(0x3f807fff)), 0x3f80);
  EXPECT_EQ(floatToBf16(fromBits(0xbf818000)), 0xbf82);
  EXPECT_EQ(floatToBf16(257.0f), 0x4380);  // 256, tie to even
  EXPECT_EQ(floatToBf16(259.0f), 0x4382);  // 260, tie to even
  // Overflow rounds to infinity.
  EXPECT_EQ(floatToBf16(fromBits(0x7f7f7fff)), 0x7f7f);
  EXPECT_EQ(floatToBf16(fromBits(0x7f7f8000)), 0x7f80);  // tie above the largest (odd): inf
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(floatToBf16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::infinity()), 0x7f80);
  // Subnormals (fp32's) round the same way.
  EXPECT_EQ(floatToBf16(fromBits(0x00008000)), 0x0000);  // tie to even 0
  EXPECT_EQ(floatToBf16(fromBits(0x00018000)), 0x0002);  // tie to even 2
  EXPECT_EQ(floatToBf16(fromBits(0x00010001)), 0x0001);
  EXPECT_EQ(floatToBf16(fromBits(0x007fffff)), 0x0080);  // rounds up to the smallest normal
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
}

TEST(HalfTest, NaNStaysQuietNaN) {
  // Payloads only in bits that are dropped must not round or truncate into infinity.
  for (const uint32_t bits : {0x7fc00000u, 0x7f800001u, 0x7f801000u, 0x7fbfffffu, 0x7fffffffu,
                              0xff800001u, 0xffc00000u, 0x7f80ffffu, 0x7fff8000u}) {
    const float nan = fromBits(bits);
    const uint16_t h = floatToHalf(nan);
    EXPECT_TRUE(isQuietHalfNaN(h)) << std::hex << bits << " -> 0x" << h;
    EXPECT_EQ((h & 0x8000) != 0, (bits >> 31) != 0) << std::hex << bits;
    const uint16_t b = floatToBf16(nan);
    EXPECT_TRUE(isQuietBf16NaN(b)) << std::hex << bits << " -> 0x" << b;
    EXPECT_EQ((b & 0x8000) != 0, (bits >> 31) != 0) << std::hex << bits;
  }
  // Top payload bits are kept.
  EXPECT_EQ(floatToHalf(fromBits(0x7fc02000)), 0x7e01);
  EXPECT_EQ(floatToBf16(fromBits(0x7f810000)), 0x7fc1);
  EXPECT_TRUE(isQuietFloatNaN(halfToFloat(0x7c01)));  // signaling half NaN comes out quiet
  EXPECT_TRUE(isQuietFloatNaN(halfToFloat(0xfe00)));
}

}  // namespace
}  // namespace hoop
