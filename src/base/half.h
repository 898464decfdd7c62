// IEEE binary16 (half) and bfloat16 conversions to and from fp32, by bit arithmetic only.
//
// Why not _Float16 or F16C: the result must be bit-identical on every machine and every build,
// and a later SIMD path (F16C, AVX-512 BF16) must agree with this one bit for bit. So:
//   - floatToHalf / floatToBf16 round to nearest, ties to even, as the hardware converters do.
//   - NaN stays NaN and comes out quiet, keeping the sign and the top payload bits (what
//     VCVTPS2PH / VCVTPH2PS / VCVTNEPS2BF16 do). A NaN is never rounded into infinity.
//   - Overflow rounds to infinity (for half: |x| >= 65520, the tie above 65504 going to even).
// halfToFloat and floatToHalf give the same answer with flush-to-zero / denormals-are-zero
// switched on: their fp32 arithmetic only sees normal values, except an fp32 subnormal input to
// floatToHalf, which rounds to a signed zero either way. bfloat16 shares fp32's exponent range,
// so its subnormals are fp32 subnormals and follow the FPU like any fp32 arithmetic.
//
// Each function is a few integer operations and selects (no data-dependent branch), so a loop
// over them auto-vectorizes; all are constexpr.
#pragma once

#include <bit>
#include <cstdint>

namespace hoop {
namespace half_detail {

// `c ? a : b` as masks. With a plain ?: GCC sinks the fp32 arithmetic feeding one arm into a
// branch and then, because fp arithmetic may trap (-ftrapping-math), will not turn the branch
// back into a select: the loop stops vectorizing. Masks keep every arm unconditional.
constexpr uint32_t selectBits(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}

}  // namespace half_detail

constexpr float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa, no sign
  // Normal: rebias the exponent from 15 to 127 (add 112 << 23) and widen the mantissa.
  const uint32_t normal = (em << 13) + (112u << 23);
  // Zero or subnormal: mantissa * 2^-24. Both steps are exact and the result (>= 2^-24) is a
  // normal fp32, so no fp32 subnormal is involved.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(static_cast<float>(static_cast<int32_t>(em)) * 0x1p-24f);
  // Inf or NaN: exponent 31 becomes 255 (31 + 224); a NaN gets the quiet bit, keeps its payload.
  const uint32_t special = ((em << 13) + (224u << 23)) | (em > 0x7c00u ? 0x00400000u : 0u);
  uint32_t bits = half_detail::selectBits(em < 0x0400u, subnormal, normal);
  bits = half_detail::selectBits(em >= 0x7c00u, special, bits);
  return std::bit_cast<float>(sign | bits);
}

constexpr uint16_t floatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  // |f| as bits; below 2^31, so signed compares (cheaper in SSE2 vector code) are exact.
  const int32_t ax = static_cast<int32_t>(x & 0x7fffffffu);
  const uint32_t uax = static_cast<uint32_t>(ax);
  // Normal result: rebias 127 -> 15 and drop 13 mantissa bits, rounding to nearest even by adding
  // 0xfff plus the lowest kept bit. A carry ripples into the exponent, which is right, and
  // carries 65520 (the tie above the largest half, 65504) into infinity.
  const uint32_t normal = (uax - (112u << 23) + 0xfffu + ((uax >> 13) & 1u)) >> 13;
  // Subnormal result (|f| < 2^-14): adding 0.5f, whose ulp is 2^-24 (the half subnormal step),
  // makes the FPU round at exactly that bit, to nearest even; the sum's low bits are the
  // result (0x400, the smallest normal half, when it rounds up to 2^-14). An fp32 subnormal
  // input rounds to 0 whether or not the FPU flushes it.
  const uint32_t subnormal =
      std::bit_cast<uint32_t>(std::bit_cast<float>(uax) + 0.5f) - 0x3f000000u;
  const uint32_t nan = 0x7e00u | ((uax >> 13) & 0x3ffu);  // quiet, top payload bits kept
  uint32_t h = half_detail::selectBits(ax < 0x38800000, subnormal, normal);
  h = half_detail::selectBits(ax >= 0x47800000, 0x7c00u, h);  // |f| >= 65536, or inf
  h = half_detail::selectBits(ax > 0x7f800000, nan, h);
  return static_cast<uint16_t>(sign | h);
}

constexpr float bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

constexpr uint16_t floatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  // Round to nearest even on the 16 dropped bits; overflow carries into infinity. Cannot wrap:
  // the largest non-NaN pattern is 0xff800000.
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  // A NaN whose payload sits only in the low 16 bits would round to inf or truncate to inf:
  // keep the top bits and set the quiet bit instead.
  const uint32_t nan = (x >> 16) | 0x40u;
  return static_cast<uint16_t>((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace hoop
