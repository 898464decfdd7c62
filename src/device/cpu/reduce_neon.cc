// aarch64 Advanced SIMD (NEON) reduction kernels: 128-bit vectors, the same bits as the portable
// kernels (reduce_portable.cc gives the reasoning for each rule; reduce_avx2.cc the same kernels
// for x86). Advanced SIMD is part of the aarch64 baseline, so this file needs no extra compiler
// flag; it is still only called after HWCAP says the kernel enabled it (cpu_isa.h), as the x86
// levels are. See simd_loop.h for why nothing here may have external linkage but neonTable().
//
// What this adds over the portable loops, which GCC vectorizes for NEON by itself where it can:
// fp16 widened and narrowed by FCVTL/FCVTN instead of bit arithmetic, bf16 narrowed with
// add-and-narrow, and 8- and 32-bit integer averages divided in fp32/fp64 lanes (NEON has no
// integer division, so the portable loops divide one element at a time).
#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <cstddef>
#include <cstdint>

#include "device/cpu/kernel_table.h"
#include "device/cpu/simd_loop.h"

#if defined(__FAST_MATH__)
#error "src/device/cpu/reduce_neon.cc must not be compiled with -ffast-math"
#endif

namespace hoop::cpu_kernels {

// Built for another architecture: an empty table, so the portable kernels run.
#if !defined(__aarch64__)
const KernelTable& neonTable() {
  static constexpr KernelTable kNone{};
  return kNone;
}
#else
namespace {

// ---- Integers: wrap-around add/multiply, compares in the type's own signedness. ----

// Integer averages: NEON has no integer division, but for integers below 2^32 a quotient computed
// in fp64 (below 2^16: in fp32) and truncated toward zero (FCVTZS/FCVTZU) is exactly C++'s
// truncating division: when x / d is not an integer it lies at least 1 / (x + d) of itself below
// the next integer, far more than one division's rounding error, so it never rounds up onto that
// integer. A divisor too large to convert exactly gives a quotient below 1, truncated to 0 as the
// exact one. 64-bit integers have no exact path and stay with the portable kernels.
struct SmallDivisor {
  using Divisor = float32x4_t;
  static Divisor divisor(size_t d) { return vdupq_n_f32(static_cast<float>(d)); }
};
struct WordDivisor {
  using Divisor = float64x2_t;
  static Divisor divisor(size_t d) { return vdupq_n_f64(static_cast<double>(d)); }
};

struct Int8Lane : SmallDivisor {
  using Storage = int8_t;
  using Vec = int8x16_t;
  static constexpr size_t kWidth = 16;
  static Vec load(const int8_t* p) { return vld1q_s8(p); }
  static void store(int8_t* p, Vec v) { vst1q_s8(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_s8(a, b); }
  static Vec prod(Vec a, Vec b) { return vmulq_s8(a, b); }  // the low 8 bits, as wrapping does
  static Vec max(Vec a, Vec b) { return vmaxq_s8(a, b); }
  static Vec min(Vec a, Vec b) { return vminq_s8(a, b); }
  // Widened to four fp32 vectors and back; quotients fit in int8 (|x| / 2 at most), so the
  // plain narrowing moves are exact.
  static int16x4_t divide4(int16x4_t x, Divisor d) {
    return vmovn_s32(vcvtq_s32_f32(vdivq_f32(vcvtq_f32_s32(vmovl_s16(x)), d)));
  }
  static int16x8_t divide8(int16x8_t x, Divisor d) {
    return vcombine_s16(divide4(vget_low_s16(x), d), divide4(vget_high_s16(x), d));
  }
  static Vec divide(Vec x, Divisor d) {
    return vcombine_s8(vmovn_s16(divide8(vmovl_s8(vget_low_s8(x)), d)),
                       vmovn_s16(divide8(vmovl_high_s8(x), d)));
  }
};

struct Uint8Lane : SmallDivisor {
  using Storage = uint8_t;
  using Vec = uint8x16_t;
  static constexpr size_t kWidth = 16;
  static Vec load(const uint8_t* p) { return vld1q_u8(p); }
  static void store(uint8_t* p, Vec v) { vst1q_u8(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_u8(a, b); }
  static Vec prod(Vec a, Vec b) { return vmulq_u8(a, b); }
  static Vec max(Vec a, Vec b) { return vmaxq_u8(a, b); }
  static Vec min(Vec a, Vec b) { return vminq_u8(a, b); }
  static uint16x4_t divide4(uint16x4_t x, Divisor d) {
    return vmovn_u32(vcvtq_u32_f32(vdivq_f32(vcvtq_f32_u32(vmovl_u16(x)), d)));
  }
  static uint16x8_t divide8(uint16x8_t x, Divisor d) {
    return vcombine_u16(divide4(vget_low_u16(x), d), divide4(vget_high_u16(x), d));
  }
  static Vec divide(Vec x, Divisor d) {
    return vcombine_u8(vmovn_u16(divide8(vmovl_u8(vget_low_u8(x)), d)),
                       vmovn_u16(divide8(vmovl_high_u8(x), d)));
  }
};

struct Int32Lane : WordDivisor {
  using Storage = int32_t;
  using Vec = int32x4_t;
  static constexpr size_t kWidth = 4;
  static Vec load(const int32_t* p) { return vld1q_s32(p); }
  static void store(int32_t* p, Vec v) { vst1q_s32(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_s32(a, b); }
  static Vec prod(Vec a, Vec b) { return vmulq_s32(a, b); }
  static Vec max(Vec a, Vec b) { return vmaxq_s32(a, b); }
  static Vec min(Vec a, Vec b) { return vminq_s32(a, b); }
  // Every int32 is exact in fp64; quotients fit in int32, so narrowing the int64 is exact.
  static int32x2_t divide2(int32x2_t x, Divisor d) {
    return vmovn_s64(vcvtq_s64_f64(vdivq_f64(vcvtq_f64_s64(vmovl_s32(x)), d)));
  }
  static Vec divide(Vec x, Divisor d) {
    return vcombine_s32(divide2(vget_low_s32(x), d), divide2(vget_high_s32(x), d));
  }
};

struct Uint32Lane : WordDivisor {
  using Storage = uint32_t;
  using Vec = uint32x4_t;
  static constexpr size_t kWidth = 4;
  static Vec load(const uint32_t* p) { return vld1q_u32(p); }
  static void store(uint32_t* p, Vec v) { vst1q_u32(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_u32(a, b); }
  static Vec prod(Vec a, Vec b) { return vmulq_u32(a, b); }
  static Vec max(Vec a, Vec b) { return vmaxq_u32(a, b); }
  static Vec min(Vec a, Vec b) { return vminq_u32(a, b); }
  static uint32x2_t divide2(uint32x2_t x, Divisor d) {
    return vmovn_u64(vcvtq_u64_f64(vdivq_f64(vcvtq_f64_u64(vmovl_u32(x)), d)));
  }
  static Vec divide(Vec x, Divisor d) {
    return vcombine_u32(divide2(vget_low_u32(x), d), divide2(vget_high_u32(x), d));
  }
};

// 64-bit: add and compare (CMGT/CMHI) exist, a multiply does not (prod stays portable).
struct Int64Lane {
  using Storage = int64_t;
  using Vec = int64x2_t;
  static constexpr size_t kWidth = 2;
  static Vec load(const int64_t* p) { return vld1q_s64(p); }
  static void store(int64_t* p, Vec v) { vst1q_s64(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_s64(a, b); }
  static Vec max(Vec a, Vec b) { return vbslq_s64(vcgtq_s64(a, b), a, b); }
  static Vec min(Vec a, Vec b) { return vbslq_s64(vcgtq_s64(a, b), b, a); }
};

struct Uint64Lane {
  using Storage = uint64_t;
  using Vec = uint64x2_t;
  static constexpr size_t kWidth = 2;
  static Vec load(const uint64_t* p) { return vld1q_u64(p); }
  static void store(uint64_t* p, Vec v) { vst1q_u64(p, v); }
  static Vec sum(Vec a, Vec b) { return vaddq_u64(a, b); }
  static Vec max(Vec a, Vec b) { return vbslq_u64(vcgtq_u64(a, b), a, b); }
  static Vec min(Vec a, Vec b) { return vbslq_u64(vcgtq_u64(a, b), b, a); }
};

// ---- Floats. max/min follow the portable selects step by step: the larger (smaller) by an
// ordered compare, then +0/-0 ties resolved by AND (OR) of the bits, then a's NaN over
// everything, so b's NaN wins only when a is a number. (FMAX returns a NaN for any NaN input
// but picks which one by signaling before quiet, not by position, and FMAXNM drops NaNs.) ----

// Sum and product: a NaN in `a` wins, made quiet, as in the portable kernels. The hardware does
// not promise it: FADD prefers a signaling NaN in either operand, and the compiler may swap the
// operands of a commutative op anyway.
inline float32x4_t firstNaNWins(float32x4_t a, float32x4_t result) {
  const uint32x4_t aIsNaN = vmvnq_u32(vceqq_f32(a, a));
  const float32x4_t quietA =
      vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0x00400000)));
  return vbslq_f32(aIsNaN, quietA, result);
}
inline float64x2_t firstNaNWins(float64x2_t a, float64x2_t result) {
  const uint64x2_t aIsNaN =
      vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(a, a))));
  const float64x2_t quietA =
      vreinterpretq_f64_u64(vorrq_u64(vreinterpretq_u64_f64(a), vdupq_n_u64(0x0008000000000000)));
  return vbslq_f64(aIsNaN, quietA, result);
}

struct F32Math {
  using Vec = float32x4_t;
  using Divisor = float32x4_t;
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, vaddq_f32(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, vmulq_f32(a, b)); }
  static Vec max(Vec a, Vec b) {
    const uint32x4_t aBits = vreinterpretq_u32_f32(a);
    const uint32x4_t bBits = vreinterpretq_u32_f32(b);
    Vec r = vbslq_f32(vcgtq_f32(a, b), a, b);
    r = vbslq_f32(vceqq_f32(a, b), vreinterpretq_f32_u32(vandq_u32(aBits, bBits)), r);
    return vbslq_f32(vmvnq_u32(vceqq_f32(a, a)), a, r);
  }
  static Vec min(Vec a, Vec b) {
    const uint32x4_t aBits = vreinterpretq_u32_f32(a);
    const uint32x4_t bBits = vreinterpretq_u32_f32(b);
    Vec r = vbslq_f32(vcltq_f32(a, b), a, b);
    r = vbslq_f32(vceqq_f32(a, b), vreinterpretq_f32_u32(vorrq_u32(aBits, bBits)), r);
    return vbslq_f32(vmvnq_u32(vceqq_f32(a, a)), a, r);
  }
  // A true division, as the portable kernel: an exact average stays exact.
  static Divisor divisor(size_t d) { return vdupq_n_f32(static_cast<float>(d)); }
  static Vec divide(Vec x, Divisor d) { return vdivq_f32(x, d); }
};

struct F32Lane : F32Math {
  using Storage = float;
  static constexpr size_t kWidth = 4;
  static Vec load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, Vec v) { vst1q_f32(p, v); }
};

struct F64Lane {
  using Storage = double;
  using Vec = float64x2_t;
  using Divisor = float64x2_t;
  static constexpr size_t kWidth = 2;
  static uint64x2_t isNaN(Vec a) {
    return vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(vceqq_f64(a, a))));
  }
  static Vec load(const double* p) { return vld1q_f64(p); }
  static void store(double* p, Vec v) { vst1q_f64(p, v); }
  static Vec sum(Vec a, Vec b) { return firstNaNWins(a, vaddq_f64(a, b)); }
  static Vec prod(Vec a, Vec b) { return firstNaNWins(a, vmulq_f64(a, b)); }
  static Vec max(Vec a, Vec b) {
    const uint64x2_t aBits = vreinterpretq_u64_f64(a);
    const uint64x2_t bBits = vreinterpretq_u64_f64(b);
    Vec r = vbslq_f64(vcgtq_f64(a, b), a, b);
    r = vbslq_f64(vceqq_f64(a, b), vreinterpretq_f64_u64(vandq_u64(aBits, bBits)), r);
    return vbslq_f64(isNaN(a), a, r);
  }
  static Vec min(Vec a, Vec b) {
    const uint64x2_t aBits = vreinterpretq_u64_f64(a);
    const uint64x2_t bBits = vreinterpretq_u64_f64(b);
    Vec r = vbslq_f64(vcltq_f64(a, b), a, b);
    r = vbslq_f64(vceqq_f64(a, b), vreinterpretq_f64_u64(vorrq_u64(aBits, bBits)), r);
    return vbslq_f64(isNaN(a), a, r);
  }
  static Divisor divisor(size_t d) { return vdupq_n_f64(static_cast<double>(d)); }
  static Vec divide(Vec x, Divisor d) { return vdivq_f64(x, d); }
};

// fp16 and bf16: eight values per 128-bit load, computed as two fp32 vectors.
struct F32Pair {
  float32x4_t low;
  float32x4_t high;
};

template <typename Storage16>
struct PairMath {
  using Storage = Storage16;
  using Vec = F32Pair;
  using Divisor = F32Math::Divisor;
  static constexpr size_t kWidth = 8;
  static Vec sum(Vec a, Vec b) {
    return {F32Math::sum(a.low, b.low), F32Math::sum(a.high, b.high)};
  }
  static Vec prod(Vec a, Vec b) {
    return {F32Math::prod(a.low, b.low), F32Math::prod(a.high, b.high)};
  }
  static Vec max(Vec a, Vec b) {
    return {F32Math::max(a.low, b.low), F32Math::max(a.high, b.high)};
  }
  static Vec min(Vec a, Vec b) {
    return {F32Math::min(a.low, b.low), F32Math::min(a.high, b.high)};
  }
  static Divisor divisor(size_t d) { return F32Math::divisor(d); }
  static Vec divide(Vec x, Divisor d) {
    return {F32Math::divide(x.low, d), F32Math::divide(x.high, d)};
  }
};

// fp16 through FCVTL/FCVTN (base Advanced SIMD, not the ARMv8.2 fp16 arithmetic): widening is
// exact (a NaN comes out quiet with its payload), narrowing rounds to nearest even under the
// default FPCR (which Linux gives every process), as floatToHalf does (half.h).
struct F16Lane : PairMath<uint16_t> {
  static Vec load(const uint16_t* p) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
    return {vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)};
  }
  static void store(uint16_t* p, Vec v) {
    vst1q_u16(p, vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(v.low), v.high)));
  }
};

// bf16 by bit shifts: widening is exact (a bf16 is the top half of an fp32), narrowing is
// floatToBf16's integer rounding, vectorized. (BFCVTN, ARMv8.6, would narrow in one instruction,
// but the Pi 4's cores do not have it.)
struct Bf16Lane : PairMath<uint16_t> {
  static Vec load(const uint16_t* p) {
    const uint16x8_t v = vld1q_u16(p);
    return {vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16)),
            vreinterpretq_f32_u32(vshll_high_n_u16(v, 16))};
  }
  static void store(uint16_t* p, Vec v) {
    vst1q_u16(p, vcombine_u16(narrow(v.low), narrow(v.high)));
  }
  // Round to nearest even on the dropped 16 bits: add 0x7fff plus the lowest kept bit and keep
  // the high half (ADDHN does the add and the narrowing at once). A NaN keeps its top bits and
  // is made quiet instead: rounding could carry it into inf.
  static uint16x4_t narrow(float32x4_t v) {
    const uint32x4_t x = vreinterpretq_u32_f32(v);
    const uint32x4_t lowestKept = vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1));
    const uint16x4_t rounded = vaddhn_u32(vaddq_u32(x, lowestKept), vdupq_n_u32(0x7fff));
    const uint16x4_t quietNaN = vorr_u16(vshrn_n_u32(x, 16), vdup_n_u16(0x40));
    const uint16x4_t isNaN = vmovn_u32(vmvnq_u32(vceqq_f32(v, v)));
    return vbsl_u16(isNaN, quietNaN, rounded);
  }
};

constexpr KernelTable kNeonKernels =
    simdKernelTable<Int8Lane, Uint8Lane, Int32Lane, Uint32Lane, Int64Lane, Uint64Lane, F16Lane,
                    F32Lane, F64Lane, Bf16Lane>();

}  // namespace

const KernelTable& neonTable() { return kNeonKernels; }
#endif

}  // namespace hoop::cpu_kernels
