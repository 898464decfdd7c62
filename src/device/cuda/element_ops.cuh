// Device-side element codecs and reduction ops: the CUDA twin of reduce_portable.cc's codecs and
// ops, giving the same bits for the same inputs (see kernels.h for the one documented exception).
//
// Why each piece looks the way it does:
//   - Arithmetic goes through the _rn intrinsics (__fadd_rn, __dmul_rn, ...): they are never
//     contracted into a fused multiply-add, and division is the IEEE one whatever the flags.
//   - NVIDIA arithmetic returns one canonical NaN (0x7fffffff) whatever the inputs, while the CPU
//     kernels keep the inputs' NaNs: pinNaN rebuilds the CPU's answer from the operands.
//   - fp16/bf16 convert with the hardware (cvt), which is exact one way and rounds to nearest
//     even the other, like half.h; only NaNs need help, because the hardware does not promise to
//     keep their sign and payload and half.h does.
//   - Selects work on bit patterns so that a NaN or a signed zero picked by max/min keeps its bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace hoop::cuda_kernels {

// The divisor of kAvg in each compute type, converted on the host exactly as the CPU kernels
// convert it (static_cast from size_t), so both divide by the same number.
struct Divisor {
  float asFloat = 1;
  double asDouble = 1;
  uint64_t asInteger = 1;
};

// ---- Bits of floating values. ----

__device__ __forceinline__ uint32_t toBits(float f) { return __float_as_uint(f); }
__device__ __forceinline__ uint64_t toBits(double d) {
  return static_cast<uint64_t>(__double_as_longlong(d));
}
__device__ __forceinline__ float fromBits(uint32_t b) { return __uint_as_float(b); }
__device__ __forceinline__ double fromBits(uint64_t b) {
  return __longlong_as_double(static_cast<long long>(b));
}

template <typename T>
struct FloatFormat;
template <>
struct FloatFormat<float> {
  using Bits = uint32_t;
  static constexpr Bits kAbsMask = 0x7fffffffu;
  static constexpr Bits kInfinity = 0x7f800000u;
  static constexpr Bits kQuietBit = 0x00400000u;
  // x86's default NaN ("real indefinite"): what SSE/AVX give for inf - inf or 0 * inf, hence
  // what the CPU kernels give on x86.
  static constexpr Bits kDefaultNaN = 0xffc00000u;
};
template <>
struct FloatFormat<double> {
  using Bits = uint64_t;
  static constexpr Bits kAbsMask = 0x7fffffffffffffffull;
  static constexpr Bits kInfinity = 0x7ff0000000000000ull;
  static constexpr Bits kQuietBit = 0x0008000000000000ull;
  static constexpr Bits kDefaultNaN = 0xfff8000000000000ull;
};

template <typename T>
__device__ __forceinline__ bool isNaN(T v) {
  using F = FloatFormat<T>;
  return (toBits(v) & F::kAbsMask) > F::kInfinity;
}

// The NaN an x86 CPU returns for `result = a op b`: a's NaN made quiet if a is NaN, else b's made
// quiet if b is NaN, else (a NaN made from numbers) the default NaN. Numbers pass unchanged.
template <typename T>
__device__ __forceinline__ T pinNaN(T a, T b, T result) {
  using F = FloatFormat<T>;
  using B = typename F::Bits;
  const B fromA = toBits(a) | F::kQuietBit;
  const B fromB = toBits(b) | F::kQuietBit;
  const B nan = isNaN(a) ? fromA : (isNaN(b) ? fromB : F::kDefaultNaN);
  return isNaN(result) ? fromBits(nan) : result;
}

__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }

// ---- Codecs: storage type in memory, compute type for the op. ----

template <typename T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};

struct HalfCodec {
  using Storage = uint16_t;
  using Compute = float;
  __device__ static float load(uint16_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    // half.h keeps a NaN's sign and payload and sets the quiet bit.
    const uint32_t nan = (static_cast<uint32_t>(h & 0x8000u) << 16) | 0x7fc00000u |
                         (static_cast<uint32_t>(h & 0x03ffu) << 13);
    return (h & 0x7fffu) > 0x7c00u ? fromBits(nan) : f;
  }
  __device__ static uint16_t store(float f) {
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    const uint32_t x = toBits(f);
    const auto nan = static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x03ffu));
    return isNaN(f) ? nan : h;
  }
};

struct Bf16Codec {
  using Storage = uint16_t;
  using Compute = float;
  __device__ static float load(uint16_t b) { return fromBits(static_cast<uint32_t>(b) << 16); }
  __device__ static uint16_t store(float f) {
    const uint32_t x = toBits(f);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint16_t rounded;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(rounded) : "f"(f));
#else
    // No bf16 converter before sm_80: round to nearest even on the 16 dropped bits.
    const auto rounded = static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
#endif
    const auto nan = static_cast<uint16_t>((x >> 16) | 0x40u);
    return isNaN(f) ? nan : rounded;
  }
};

// ---- Ops on the compute type. Each takes the Divisor so the kernel can build any of them. ----

template <typename T>
struct SumOp {
  __device__ explicit SumOp(const Divisor&) {}
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps instead of signed-overflow UB
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return pinNaN(a, b, add(a, b));
    }
  }
};

template <typename T>
struct ProdOp {
  __device__ explicit ProdOp(const Divisor&) {}
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return pinNaN(a, b, mul(a, b));
    }
  }
};

// As the CPU's MaxOp/MinOp: a's NaN wins (unchanged), then b's NaN (a > b is false), equal
// values differing only in the sign of zero give +0 for max (AND of the bits), -0 for min (OR).
template <typename T>
struct MaxOp {
  __device__ explicit MaxOp(const Divisor&) {}
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      const auto x = toBits(a);
      const auto y = toBits(b);
      auto r = a > b ? x : y;
      r = a == b ? (x & y) : r;
      r = isNaN(a) ? x : r;
      return fromBits(r);
    }
  }
};

template <typename T>
struct MinOp {
  __device__ explicit MinOp(const Divisor&) {}
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      const auto x = toBits(a);
      const auto y = toBits(b);
      auto r = a < b ? x : y;
      r = a == b ? (x | y) : r;
      r = isNaN(a) ? x : r;
      return fromBits(r);
    }
  }
};

// x / divisor, as the CPU's DivideBy: floats a true IEEE division; integers truncate toward
// zero, dividing the magnitude in an unsigned type wide enough for |x| and the divisor (32 bits
// for 8-bit types and int32, whose magnitudes stay below 2^32 - 1, so clamping the divisor there
// changes no quotient; 64 bits otherwise, uint32 included).
template <typename T>
struct DivideBy {
  using W = std::conditional_t<sizeof(T) < 4 || std::is_same_v<T, int32_t>, uint32_t, uint64_t>;
  __device__ explicit DivideBy(const Divisor& d) {
    if constexpr (std::is_same_v<T, float>) {
      divisor = d.asFloat;
    } else if constexpr (std::is_same_v<T, double>) {
      divisor = d.asDouble;
    } else {
      const uint64_t most = static_cast<W>(~W{0});
      divisor = static_cast<W>(d.asInteger < most ? d.asInteger : most);
    }
  }
  __device__ T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        const bool negative = x < 0;
        const W magnitude = negative ? W{0} - static_cast<W>(x) : static_cast<W>(x);
        const W q = magnitude / divisor;
        return static_cast<T>(negative ? W{0} - q : q);
      } else {
        return static_cast<T>(static_cast<W>(x) / divisor);
      }
    } else {
      return pinNaN(x, divisor, div(x, divisor));
    }
  }
  std::conditional_t<std::is_integral_v<T>, W, T> divisor;
};

// kAvg's last step: the sum, then the division, both in the compute type.
template <typename T>
struct SumThenDivideOp {
  __device__ explicit SumThenDivideOp(const Divisor& d) : divide(d) {}
  __device__ T operator()(T a, T b) const { return divide(SumOp<T>(Divisor{})(a, b)); }
  DivideBy<T> divide;
};

// finishAverage: out = a / divisor; b is ignored (the launcher passes a again).
template <typename T>
struct DivideOp {
  __device__ explicit DivideOp(const Divisor& d) : divide(d) {}
  __device__ T operator()(T a, T) const { return divide(a); }
  DivideBy<T> divide;
};

}  // namespace hoop::cuda_kernels
