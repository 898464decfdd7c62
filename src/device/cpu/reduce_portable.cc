// Portable reduction kernels: one template loop per (element codec, op), instantiated into a
// table per data type. The loops are written so GCC/Clang -O3 vectorize them for the baseline
// ISA: no per-element switch, no data-dependent branch (floating max/min and the fp16/bf16
// conversions use selects). They define the results: the AVX2 and AVX-512 kernels
// (reduce_avx2.cc, reduce_avx512.cc) must give the same bits, and fall back to these where they
// have nothing faster.

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/half.h"
#include "device/cpu/kernel_table.h"

// The NaN and signed-zero rules and bitwise reproducibility need IEEE semantics.
#if defined(__FAST_MATH__)
#error "src/device/cpu/reduce_portable.cc must not be compiled with -ffast-math"
#endif

// Out may alias an input exactly (out == a or out == b): element i is read before it is written
// and no other element is involved, so there is no loop-carried dependence. Saying so matters
// for the in-place case, the common one in a ring: Clang's runtime overlap check otherwise sends
// it to the scalar loop (several times slower for fp32 max); GCC's check lets it through but costs
// a few instructions per call.
#if defined(__clang__)
#define HOOP_NO_LOOP_CARRIED_DEPENDENCE _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define HOOP_NO_LOOP_CARRIED_DEPENDENCE _Pragma("GCC ivdep")
#else
#define HOOP_NO_LOOP_CARRIED_DEPENDENCE
#endif

namespace hoop::cpu_kernels {
namespace {

// ---- Element codecs: storage type in memory, compute type for the op. ----

template <typename T>
struct NativeCodec {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};

struct HalfCodec {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return halfToFloat(v); }
  static Storage store(Compute v) { return floatToHalf(v); }
};

struct Bf16Codec {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return bf16ToFloat(v); }
  static Storage store(Compute v) { return floatToBf16(v); }
};

// ---- Ops on the compute type. ----

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
T bitwiseAnd(T a, T b) {
  return std::bit_cast<T>(std::bit_cast<Bits<T>>(a) & std::bit_cast<Bits<T>>(b));
}
template <typename T>
T bitwiseOr(T a, T b) {
  return std::bit_cast<T>(std::bit_cast<Bits<T>>(a) | std::bit_cast<Bits<T>>(b));
}

// Which NaN an arithmetic op returns when both inputs are NaN: x86 returns its first source
// operand's, but + and * are commutative to the compiler, which may swap the operands (GCC does,
// differently in the one- and two-output loops of this file), so the payload would depend on the
// build. Pinned: a NaN in `a` wins, made quiet; otherwise the hardware's result (b's NaN made
// quiet, or the default NaN of an invalid operation such as inf - inf). The SIMD kernels do the
// same.
//
// Written so GCC still vectorizes it for SSE2: with `a != a ? quiet(a) : a + b` it moves the add
// (which may trap, under -ftrapping-math) into a branch of its own and the loop stays scalar
// (several times slower for the fp64 sum). Testing the result first (a NaN `a` always gives a NaN
// result) makes the add unconditional.
template <typename T>
T firstNaNWins(T a, T result) {
  using B = Bits<T>;
  const T quietA =
      std::bit_cast<T>(std::bit_cast<B>(a) | B{1} << (std::numeric_limits<T>::digits - 2));
  return result != result && a != a ? quietA : result;
}

template <typename T>
struct SumOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // wraps instead of signed-overflow UB
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return firstNaNWins(a, a + b);
    }
  }
};

template <typename T>
struct ProdOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return firstNaNWins(a, a * b);
    }
  }
};

// Floating max/min as selects, in an order that makes every case defined: a > b (or a < b) is
// false when b is NaN, so b's NaN falls through; a's NaN is picked last, so it wins over
// everything (also when both are NaN). Equal values can differ in bits only as +0/-0: AND of the
// bits gives +0 for max, OR gives -0 for min. Selects on the float type (not on integer masks)
// are what GCC vectorizes for both fp32 and fp64.
template <typename T>
struct MaxOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      const T equal = bitwiseAnd(a, b);
      T r = a > b ? a : b;
      r = a == b ? equal : r;
      return a != a ? a : r;
    }
  }
};

template <typename T>
struct MinOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      const T equal = bitwiseOr(a, b);
      T r = a < b ? a : b;
      r = a == b ? equal : r;
      return a != a ? a : r;
    }
  }
};

// x / divisor. Floats: a true division (an exact quotient stays exact). Integers: truncation
// toward zero, done on the magnitude in an unsigned type wide enough for both |x| and the
// divisor, so every size_t divisor and every x (including the most negative) is exact. Types
// whose magnitudes stay below 2^32 - 1 (8-bit, int32: at most 2^31) divide in 32 bits (faster than
// a 64-bit divide): a divisor above 2^32 - 1 gives quotient 0 either way, so clamping it changes
// nothing. uint32 divides in 64 bits: 0xffffffff / min(2^32, 2^32 - 1) would be 1, not 0.
template <typename T>
struct DivideBy {
  explicit DivideBy(size_t divisor) {
    if constexpr (std::is_integral_v<T>) {
      d = static_cast<W>(std::min<size_t>(divisor, std::numeric_limits<W>::max()));
    } else {
      d = static_cast<T>(divisor);
    }
  }
  T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (std::is_signed_v<T>) {
        const bool negative = x < 0;
        const W magnitude = negative ? W{0} - static_cast<W>(x) : static_cast<W>(x);
        const W q = magnitude / d;
        return static_cast<T>(negative ? W{0} - q : q);
      } else {
        return static_cast<T>(static_cast<W>(x) / d);
      }
    } else {
      return x / d;
    }
  }
  using W = std::conditional_t<sizeof(T) < 4 || std::is_same_v<T, int32_t>, uint32_t, uint64_t>;
  std::conditional_t<std::is_integral_v<T>, W, T> d;
};

template <typename T>
struct SumThenDivideOp {
  explicit SumThenDivideOp(size_t divisor) : divide(divisor) {}
  T operator()(T a, T b) const { return divide(SumOp<T>{}(a, b)); }
  DivideBy<T> divide;
};

// ---- Loops. ----

// out2 is a template argument, not a null check per element, so the one-output loop stays as
// tight as before.
template <typename Codec, bool kSecondOutput, typename Op>
void binaryLoop(typename Codec::Storage* out1, typename Codec::Storage* out2,
                const typename Codec::Storage* a, const typename Codec::Storage* b, size_t count,
                Op op) {
  HOOP_NO_LOOP_CARRIED_DEPENDENCE
  for (size_t i = 0; i < count; ++i) {
    const typename Codec::Storage r = Codec::store(op(Codec::load(a[i]), Codec::load(b[i])));
    out1[i] = r;
    if constexpr (kSecondOutput) out2[i] = r;
  }
}

template <typename Codec, typename Op>
void unaryLoop(typename Codec::Storage* out, const typename Codec::Storage* in, size_t count,
               Op op) {
  HOOP_NO_LOOP_CARRIED_DEPENDENCE
  for (size_t i = 0; i < count; ++i) {
    out[i] = Codec::store(op(Codec::load(in[i])));
  }
}

template <typename Codec, template <typename> class OpT>
void binaryKernel(void* out1, void* out2, const void* a, const void* b, size_t count,
                  size_t divisor) {
  using S = typename Codec::Storage;
  using C = typename Codec::Compute;
  using Op = OpT<C>;
  Op op = [&] {
    if constexpr (std::is_constructible_v<Op, size_t>) {
      return Op(divisor);
    } else {
      return Op{};
    }
  }();
  auto* o1 = static_cast<S*>(out1);
  auto* o2 = static_cast<S*>(out2);
  auto* x = static_cast<const S*>(a);
  auto* y = static_cast<const S*>(b);
  if (o2 == nullptr) {
    binaryLoop<Codec, false>(o1, o2, x, y, count, op);
  } else {
    binaryLoop<Codec, true>(o1, o2, x, y, count, op);
  }
}

template <typename Codec>
void divideKernel(void* out, const void* in, size_t count, size_t divisor) {
  using S = typename Codec::Storage;
  unaryLoop<Codec>(static_cast<S*>(out), static_cast<const S*>(in), count,
                   DivideBy<typename Codec::Compute>(divisor));
}

template <typename Codec>
constexpr KernelSet portableKernels() {
  return KernelSet{binaryKernel<Codec, SumOp>,           binaryKernel<Codec, ProdOp>,
                   binaryKernel<Codec, MaxOp>,           binaryKernel<Codec, MinOp>,
                   binaryKernel<Codec, SumThenDivideOp>, divideKernel<Codec>};
}

constexpr KernelTable kPortableKernels = [] {
  KernelTable t{};
  auto set = [&t](DataType type, KernelSet k) { t[static_cast<size_t>(type)] = k; };
  set(DataType::kInt8, portableKernels<NativeCodec<int8_t>>());
  set(DataType::kUint8, portableKernels<NativeCodec<uint8_t>>());
  set(DataType::kInt32, portableKernels<NativeCodec<int32_t>>());
  set(DataType::kUint32, portableKernels<NativeCodec<uint32_t>>());
  set(DataType::kInt64, portableKernels<NativeCodec<int64_t>>());
  set(DataType::kUint64, portableKernels<NativeCodec<uint64_t>>());
  set(DataType::kFloat16, portableKernels<HalfCodec>());
  set(DataType::kFloat32, portableKernels<NativeCodec<float>>());
  set(DataType::kFloat64, portableKernels<NativeCodec<double>>());
  set(DataType::kBfloat16, portableKernels<Bf16Codec>());
  return t;
}();

}  // namespace

const KernelTable& portableTable() { return kPortableKernels; }

}  // namespace hoop::cpu_kernels
