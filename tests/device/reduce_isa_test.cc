// The reduction kernels at every CPU level this machine has (portable, AVX2, AVX-512, NEON), each
// forced through reduceCopyFinalAt: against a scalar reference written here from reduce.h's
// semantics, for every type x op, every length 0..257, unaligned pointers, exact aliasing, the
// fused two output form, and inputs full of special values (NaN with payloads, infinities, signed
// zeros, subnormals, integer extremes). And bitwise against the portable kernels, NaN payloads
// included, since every level must give the same bits. Plus the HOOP_CPU_ISA selection rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "base/types.h"
#include "device/cpu/cpu_isa.h"
#include "device/cpu/reduce.h"
#include "reference_formats.h"

namespace hoop {
namespace {

using Rng = std::mt19937_64;

constexpr CpuIsa kAllLevels[] = {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kNeon};
constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,   DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,   DataType::kUint64,
                                  DataType::kFloat16, DataType::kFloat32, DataType::kFloat64,
                                  DataType::kBfloat16};

bool supported(CpuIsa isa) { return cpuIsaIncludes(detectCpuIsa(), isa); }

// ---- Per-type description: storage, NaN test, quieting, and the values worth mixing in. ----

template <DataType D>
struct Traits;

template <typename T>
struct IntegerTraits {
  using S = T;
  static constexpr bool kFloat = false;
  static std::vector<S> specials() {
    return {0,
            1,
            static_cast<S>(-1),
            2,
            std::numeric_limits<S>::min(),
            std::numeric_limits<S>::max(),
            static_cast<S>(std::numeric_limits<S>::min() + 1),
            static_cast<S>(std::numeric_limits<S>::max() - 1)};
  }
};
template <>
struct Traits<DataType::kInt8> : IntegerTraits<int8_t> {};
template <>
struct Traits<DataType::kUint8> : IntegerTraits<uint8_t> {};
template <>
struct Traits<DataType::kInt32> : IntegerTraits<int32_t> {};
template <>
struct Traits<DataType::kUint32> : IntegerTraits<uint32_t> {};
template <>
struct Traits<DataType::kInt64> : IntegerTraits<int64_t> {};
template <>
struct Traits<DataType::kUint64> : IntegerTraits<uint64_t> {};

// 16-bit floats: computed in fp32 (the reference widens through the format definition, which is
// exact), rounded once by reference::roundToSmallFloat.
template <reference::SmallFloatFormat kFormat, uint16_t kQuietBit>
struct SmallFloatTraits {
  using S = uint16_t;
  using C = float;
  static constexpr bool kFloat = true;
  static bool isNaN(S s) {
    const uint16_t inf = static_cast<uint16_t>(kFormat.maxField() << kFormat.mantissaBits);
    return (s & inf) == inf && (s & (inf ^ 0x7fff)) != 0;
  }
  static S quiet(S s) { return static_cast<S>(s | kQuietBit); }
  static S quietArithmetic(S s) { return quiet(s); }
  static C widen(S s) { return static_cast<C>(reference::decodeSmallFloat(s, kFormat)); }
  static S narrow(C c) {  // any NaN: matchesReference checks only NaN-ness for arithmetic
    if (std::isnan(c))
      return static_cast<S>((kFormat.maxField() << kFormat.mantissaBits) | kQuietBit);
    return reference::roundToSmallFloat(c, kFormat);
  }
  static S fromInt(int v) { return *reference::encodeExactSmallFloat(v, kFormat); }
  static S randomBits(Rng& rng) { return static_cast<S>(rng()); }
  static std::vector<S> specials() {
    const uint16_t inf = static_cast<uint16_t>(kFormat.maxField() << kFormat.mantissaBits);
    const uint16_t mantissa = inf ^ 0x7fff;
    return {0x0000,
            0x8000,
            inf,
            static_cast<S>(0x8000 | inf),
            static_cast<S>(inf | kQuietBit),                         // quiet NaN
            static_cast<S>(0x8000 | inf | kQuietBit | 5),            // negative, payload
            static_cast<S>(inf | 1),                                 // signaling
            static_cast<S>(0x8000 | inf | (mantissa & ~kQuietBit)),  // signaling, all payload
            0x0001,                                                  // smallest subnormal
            static_cast<S>(0x8000 | mantissa),                       // largest subnormal
            static_cast<S>(mantissa + 1),                            // smallest normal
            static_cast<S>(inf - 1),                                 // largest finite
            static_cast<S>(0x8000 | (inf - 1))};
  }
};
template <>
struct Traits<DataType::kFloat16> : SmallFloatTraits<reference::kHalfFormat, 0x200> {};
template <>
struct Traits<DataType::kBfloat16> : SmallFloatTraits<reference::kBf16Format, 0x40> {};

template <typename T>
struct NativeFloatTraits {
  using S = T;
  using C = T;
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  static constexpr bool kFloat = true;
  static bool isNaN(S s) { return std::isnan(s); }
  static S quiet(S s) { return s; }  // max/min select a NaN input as it is
  static S quietArithmetic(S s) {    // + and * make a NaN quiet
    return std::bit_cast<S>(std::bit_cast<Bits>(s) | Bits{1}
                                                         << (std::numeric_limits<S>::digits - 2));
  }
  static C widen(S s) { return s; }
  static S narrow(C c) { return c; }
  static S fromInt(int v) { return static_cast<S>(v); }
  static S randomBits(Rng& rng) { return std::bit_cast<S>(static_cast<Bits>(rng())); }
  static std::vector<S> specials() {
    using L = std::numeric_limits<T>;
    constexpr Bits kExponent = std::bit_cast<Bits>(L::infinity());
    constexpr Bits kSign = Bits{1} << (8 * sizeof(T) - 1);
    return {T{0},
            -T{0},
            L::infinity(),
            -L::infinity(),
            L::quiet_NaN(),
            std::bit_cast<T>(kSign | kExponent | (kExponent >> 1 & ~kExponent) | 5),
            std::bit_cast<T>(kExponent | 1),  // signaling
            L::denorm_min(),
            -L::denorm_min(),
            std::bit_cast<T>(static_cast<Bits>((kExponent >> 1 & ~kExponent) - 1)),  // subnormal
            L::min(),
            L::max(),
            -L::max()};
  }
};
template <>
struct Traits<DataType::kFloat32> : NativeFloatTraits<float> {};
template <>
struct Traits<DataType::kFloat64> : NativeFloatTraits<double> {};

template <typename S>
uint64_t bitsOf(S v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(S));
  return bits;
}
template <typename S>
bool sameBits(S x, S y) {
  return std::memcmp(&x, &y, sizeof(S)) == 0;
}

// ---- The reference, element by element, from reduce.h. `divisor` <= 1: no division. ----

template <typename T>
T referenceInteger(T a, T b, RedOp op, size_t divisor) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case RedOp::kSum: return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    case RedOp::kProd: return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    case RedOp::kMax: return std::max(a, b);
    case RedOp::kMin: return std::min(a, b);
    case RedOp::kAvg: {
      const T sum = static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      if (divisor <= 1) return sum;
      // __int128 division truncates toward zero and holds every sum and divisor here.
      return static_cast<T>(static_cast<__int128>(sum) / static_cast<__int128>(divisor));
    }
  }
  return 0;
}

// Float max/min rules: a NaN wins, the first input's when both are (16-bit NaNs come out quiet);
// -0 < +0; otherwise the larger (smaller) input, bit for bit.
template <typename X>
typename X::S referenceMaxMin(typename X::S a, typename X::S b, bool max) {
  if (X::isNaN(a)) return X::quiet(a);
  if (X::isNaN(b)) return X::quiet(b);
  const auto x = X::widen(a);
  const auto y = X::widen(b);
  if (x == y) {
    if (sameBits(a, b)) return a;
    return (std::signbit(x) == max) ? b : a;  // +0 and -0: max takes +0, min takes -0
  }
  return (x > y) == max ? a : b;
}

// Sum, product, average: when both inputs are NaN the first one's wins (made quiet), whichever
// order the compiler put the operands in; one NaN input comes out quiet, as IEEE says.
template <typename X>
typename X::S referenceFloat(typename X::S a, typename X::S b, RedOp op, size_t divisor) {
  using C = typename X::C;
  if (op != RedOp::kMax && op != RedOp::kMin) {
    if (X::isNaN(a)) return X::quietArithmetic(a);
    if (X::isNaN(b)) return X::quietArithmetic(b);
  }
  const C x = X::widen(a);
  const C y = X::widen(b);
  switch (op) {
    case RedOp::kSum: return X::narrow(x + y);
    case RedOp::kProd: return X::narrow(x * y);
    case RedOp::kMax: return referenceMaxMin<X>(a, b, true);
    case RedOp::kMin: return referenceMaxMin<X>(a, b, false);
    case RedOp::kAvg: {
      const C sum = x + y;
      return X::narrow(divisor <= 1 ? sum : sum / static_cast<C>(divisor));
    }
  }
  return {};
}

template <DataType D>
typename Traits<D>::S reference(typename Traits<D>::S a, typename Traits<D>::S b, RedOp op,
                                size_t divisor) {
  using X = Traits<D>;
  if constexpr (X::kFloat) {
    return referenceFloat<X>(a, b, op, divisor);
  } else {
    return referenceInteger(a, b, op, divisor);
  }
}

// A NaN made by arithmetic from numbers (inf - inf, 0 * inf) is the CPU's default NaN, which
// the reference leaves open: any NaN passes here, and the comparison with the portable kernels
// pins its bits.
template <DataType D>
bool matchesReference(typename Traits<D>::S got, typename Traits<D>::S expected, RedOp op) {
  using X = Traits<D>;
  if constexpr (X::kFloat) {
    if (X::isNaN(expected) && op != RedOp::kMax && op != RedOp::kMin) return X::isNaN(got);
  }
  return sameBits(got, expected);
}

// ---- Inputs: a quarter special values, the rest random (integer-valued or any bit pattern for
// floats, so ties, rounding, overflow and subnormal results all occur). ----

template <DataType D>
typename Traits<D>::S randomInput(Rng& rng) {
  using X = Traits<D>;
  using S = typename X::S;
  static const std::vector<S> specials = X::specials();
  const uint64_t pick = rng() % 8;
  if (pick < 2) return specials[rng() % specials.size()];
  if constexpr (X::kFloat) {
    if (pick < 5) return X::fromInt(static_cast<int>(rng() % 33) - 16);
    return X::randomBits(rng);
  } else {
    return static_cast<S>(rng());
  }
}

// Where the outputs go: out1 and out2 (null: the one-output form) relative to the inputs.
enum class Layout { kOut, kOutIsA, kOutIsB, kTwoOuts, kOutIsATwoOuts, kSecondOutIsB };
constexpr Layout kAllLayouts[] = {Layout::kOut,     Layout::kOutIsA,        Layout::kOutIsB,
                                  Layout::kTwoOuts, Layout::kOutIsATwoOuts, Layout::kSecondOutIsB};

const char* layoutName(Layout layout) {
  switch (layout) {
    case Layout::kOut: return "out";
    case Layout::kOutIsA: return "out==a";
    case Layout::kOutIsB: return "out==b";
    case Layout::kTwoOuts: return "out1,out2";
    case Layout::kOutIsATwoOuts: return "out1==a,out2";
    case Layout::kSecondOutIsB: return "out1,out2==b";
  }
  return "?";
}

constexpr size_t kGuard = 3;  // elements on each side of the range that must stay untouched

template <DataType D>
void checkCall(CpuIsa isa, RedOp op, size_t divisor, size_t n, Layout layout, size_t offset,
               Rng& rng) {
  using S = typename Traits<D>::S;
  std::ostringstream what;
  what << cpuIsaName(isa) << " " << dataTypeName(D) << " " << redOpName(op) << " divisor "
       << divisor << " n=" << n << " " << layoutName(layout) << " offset " << offset;
  SCOPED_TRACE(what.str());

  // Four buffers (a, b, out1, out2), each with guards around [offset, offset + n).
  const size_t size = kGuard + offset + n + kGuard;
  std::vector<std::vector<S>> buffers(4, std::vector<S>(size));
  for (auto& buffer : buffers) {
    for (S& v : buffer) v = randomInput<D>(rng);
  }
  auto at = [&](int k) { return buffers[k].data() + kGuard + offset; };
  S* a = at(0);
  S* b = at(1);
  S* out1 = at(2);
  S* out2 = nullptr;
  switch (layout) {
    case Layout::kOut: break;
    case Layout::kOutIsA: out1 = a; break;
    case Layout::kOutIsB: out1 = b; break;
    case Layout::kTwoOuts: out2 = at(3); break;
    case Layout::kOutIsATwoOuts: out1 = a, out2 = at(3); break;
    case Layout::kSecondOutIsB: out2 = b; break;
  }
  const std::vector<S> inA(a, a + n), inB(b, b + n);
  const std::vector<std::vector<S>> before = buffers;

  // The portable kernels on copies of the same inputs: every level must match them bit for bit.
  std::vector<S> portable(n), pa = inA, pb = inB;
  reduceCopyFinalAt(CpuIsa::kPortable, portable.data(), nullptr, pa.data(), pb.data(), n, D, op,
                    divisor);

  reduceCopyFinalAt(isa, out1, out2, a, b, n, D, op, divisor);

  for (size_t i = 0; i < n; ++i) {
    const S expected = reference<D>(inA[i], inB[i], op, divisor);
    for (const S* out : {out1, out2}) {
      if (out == nullptr) continue;
      if (!matchesReference<D>(out[i], expected, op) || !sameBits(out[i], portable[i])) {
        ADD_FAILURE() << "element " << i << " of " << (out == out1 ? "out1" : "out2") << ": got 0x"
                      << std::hex << bitsOf(out[i]) << ", reference 0x" << bitsOf(expected)
                      << ", portable 0x" << bitsOf(portable[i]) << " (inputs 0x" << bitsOf(inA[i])
                      << ", 0x" << bitsOf(inB[i]) << ")";
        return;
      }
    }
  }
  // Nothing else changed: not the guards, not an input that is not an output.
  for (int k = 0; k < 4; ++k) {
    const bool isOutput = at(k) == out1 || at(k) == out2;
    for (size_t i = 0; i < size; ++i) {
      const bool inRange = i >= kGuard + offset && i < kGuard + offset + n;
      if (isOutput && inRange) continue;
      if (!sameBits(buffers[k][i], before[k][i])) {
        ADD_FAILURE() << "buffer "
                      << "ab12"[k] << " element " << i << " changed";
        return;
      }
    }
  }
}

template <DataType D>
void sweep(CpuIsa isa) {
  Rng rng(static_cast<uint64_t>(D) * 7919 + static_cast<uint64_t>(isa));
  struct Variant {
    RedOp op;
    size_t divisor;  // 1: reduce(); above 1: reduceFinal() (divides only for kAvg)
  };
  const Variant variants[] = {{RedOp::kSum, 1},   {RedOp::kProd, 1},
                              {RedOp::kMax, 1},   {RedOp::kMin, 1},
                              {RedOp::kAvg, 1},   {RedOp::kAvg, 2},
                              {RedOp::kAvg, 3},   {RedOp::kAvg, 7},
                              {RedOp::kAvg, 200}, {RedOp::kAvg, size_t{1} << 33},
                              {RedOp::kMax, 5}};
  for (const Variant& v : variants) {
    // Every length up to 257: empty, shorter than one vector, several whole vectors (the widest
    // step is an AVX-512 int8 vector, 64 elements) and every tail. Short ones in every layout
    // and alignment; longer ones cycle through them.
    for (size_t n = 0; n <= 257; ++n) {
      if (n <= 40) {
        for (const Layout layout : kAllLayouts) {
          for (const size_t offset : {0, 1})
            checkCall<D>(isa, v.op, v.divisor, n, layout, offset, rng);
        }
      } else {
        checkCall<D>(isa, v.op, v.divisor, n, kAllLayouts[n % 6], (n / 6) % 2, rng);
      }
    }
    checkCall<D>(isa, v.op, v.divisor, 4099, Layout::kTwoOuts, 1, rng);
  }
}

using LevelAndType = std::tuple<CpuIsa, DataType>;
class ReduceAtEveryLevelTest : public ::testing::TestWithParam<LevelAndType> {};

TEST_P(ReduceAtEveryLevelTest, MatchesReferenceAndPortableBitForBit) {
  const auto [isa, type] = GetParam();
  if (!supported(isa)) GTEST_SKIP() << "this CPU has no " << cpuIsaName(isa);
  switch (type) {
    case DataType::kInt8: sweep<DataType::kInt8>(isa); break;
    case DataType::kUint8: sweep<DataType::kUint8>(isa); break;
    case DataType::kInt32: sweep<DataType::kInt32>(isa); break;
    case DataType::kUint32: sweep<DataType::kUint32>(isa); break;
    case DataType::kInt64: sweep<DataType::kInt64>(isa); break;
    case DataType::kUint64: sweep<DataType::kUint64>(isa); break;
    case DataType::kFloat16: sweep<DataType::kFloat16>(isa); break;
    case DataType::kFloat32: sweep<DataType::kFloat32>(isa); break;
    case DataType::kFloat64: sweep<DataType::kFloat64>(isa); break;
    case DataType::kBfloat16: sweep<DataType::kBfloat16>(isa); break;
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevelsAndTypes, ReduceAtEveryLevelTest,
                         ::testing::Combine(::testing::ValuesIn(kAllLevels),
                                            ::testing::ValuesIn(kAllTypes)),
                         [](const ::testing::TestParamInfo<LevelAndType>& p) {
                           return std::string(cpuIsaName(std::get<0>(p.param))) + "_" +
                                  std::string(dataTypeName(std::get<1>(p.param)));
                         });

class ReduceLevelTest : public ::testing::TestWithParam<CpuIsa> {
 protected:
  void SetUp() override {
    if (!supported(GetParam())) GTEST_SKIP() << "this CPU has no " << cpuIsaName(GetParam());
  }
};

// Every 16-bit pattern through widen and narrow: max(x, x) is x (a NaN comes out quiet, its sign
// and payload kept), and x + (-0) is x as well (-0 is the additive identity, also for -0 itself).
TEST_P(ReduceLevelTest, EverySixteenBitPatternRoundTrips) {
  const CpuIsa isa = GetParam();
  std::vector<uint16_t> all(65536), minusZero(65536, 0x8000), out(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (const DataType type : {DataType::kFloat16, DataType::kBfloat16}) {
    const uint16_t quietBit = type == DataType::kFloat16 ? 0x200 : 0x40;
    auto isNaN = [type](uint16_t h) {
      return type == DataType::kFloat16 ? reference::isHalfNaN(h) : reference::isBf16NaN(h);
    };
    for (const auto& [op, b] : {std::pair{RedOp::kMax, &all}, std::pair{RedOp::kSum, &minusZero}}) {
      reduceCopyFinalAt(isa, out.data(), nullptr, all.data(), b->data(), all.size(), type, op, 1);
      for (size_t i = 0; i < all.size(); ++i) {
        const uint16_t expected = isNaN(all[i]) ? all[i] | quietBit : all[i];
        ASSERT_EQ(out[i], expected) << cpuIsaName(isa) << " " << dataTypeName(type) << " "
                                    << redOpName(op) << " of 0x" << std::hex << i;
      }
    }
  }
}

// Narrowing: every 16-bit pattern times a few factors that put products on rounding ties, into
// the subnormals and past the largest finite value, against the reference rounding.
TEST_P(ReduceLevelTest, SixteenBitProductsRoundToNearestEven) {
  const CpuIsa isa = GetParam();
  std::vector<uint16_t> all(65536), factor(65536), out(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (const DataType type : {DataType::kFloat16, DataType::kBfloat16}) {
    const auto format =
        type == DataType::kFloat16 ? reference::kHalfFormat : reference::kBf16Format;
    for (const double f : {0.5, 0.75, 1.5, 0.0625, 3.0, -1.25, 1.0 / 1024}) {
      const uint16_t fBits = *reference::encodeExactSmallFloat(f, format);
      std::fill(factor.begin(), factor.end(), fBits);
      reduceCopyFinalAt(isa, out.data(), nullptr, all.data(), factor.data(), all.size(), type,
                        RedOp::kProd, 1);
      for (size_t i = 0; i < all.size(); ++i) {
        const double x = reference::decodeSmallFloat(all[i], format);
        if (std::isnan(x)) continue;  // covered by the round trip above
        const auto product = static_cast<float>(x) * static_cast<float>(f);
        ASSERT_EQ(out[i], reference::roundToSmallFloat(product, format))
            << cpuIsaName(isa) << " " << dataTypeName(type) << " 0x" << std::hex << i << " * " << f;
      }
    }
  }
}

// The documented rules, spelled out: NaN propagates (the first input's when both are), signed
// zeros are ordered, in the vector body and in the tail.
template <typename S>
void expectPairs(CpuIsa isa, DataType type, RedOp op, const std::vector<std::array<S, 3>>& cases) {
  constexpr size_t kLength = 67;  // longer than one vector of every type, with a tail
  std::vector<S> a(kLength), b(kLength), out(kLength);
  for (size_t i = 0; i < kLength; ++i) {
    a[i] = cases[i % cases.size()][0];
    b[i] = cases[i % cases.size()][1];
  }
  reduceCopyFinalAt(isa, out.data(), nullptr, a.data(), b.data(), kLength, type, op, 1);
  for (size_t i = 0; i < kLength; ++i) {
    EXPECT_TRUE(sameBits(out[i], cases[i % cases.size()][2]))
        << cpuIsaName(isa) << " " << dataTypeName(type) << " " << redOpName(op) << " case "
        << i % cases.size() << " at " << i << ": got 0x" << std::hex << bitsOf(out[i]);
  }
}

TEST_P(ReduceLevelTest, FloatMaxMinRules) {
  const CpuIsa isa = GetParam();
  const float nanA = std::bit_cast<float>(0x7fc00001u), nanB = std::bit_cast<float>(0xffc00002u);
  const float inf = std::numeric_limits<float>::infinity();
  expectPairs<float>(isa, DataType::kFloat32, RedOp::kMax,
                     {{-0.0f, 0.0f, 0.0f},
                      {0.0f, -0.0f, 0.0f},
                      {-0.0f, -0.0f, -0.0f},
                      {nanA, 1.0f, nanA},
                      {1.0f, nanA, nanA},
                      {nanA, nanB, nanA},
                      {nanB, nanA, nanB},
                      {-inf, inf, inf},
                      {inf, nanB, nanB}});
  expectPairs<float>(isa, DataType::kFloat32, RedOp::kMin,
                     {{-0.0f, 0.0f, -0.0f},
                      {0.0f, -0.0f, -0.0f},
                      {0.0f, 0.0f, 0.0f},
                      {nanA, 1.0f, nanA},
                      {1.0f, nanA, nanA},
                      {nanA, nanB, nanA},
                      {nanB, nanA, nanB},
                      {-inf, inf, -inf},
                      {-inf, nanB, nanB}});
  const double dNaN = std::bit_cast<double>(uint64_t{0x7ff4000000000003});  // signaling: kept
  expectPairs<double>(isa, DataType::kFloat64, RedOp::kMax,
                      {{-0.0, 0.0, 0.0}, {0.0, -0.0, 0.0}, {dNaN, 1.0, dNaN}, {1.0, dNaN, dNaN}});
  expectPairs<double>(isa, DataType::kFloat64, RedOp::kMin,
                      {{-0.0, 0.0, -0.0}, {0.0, -0.0, -0.0}, {dNaN, -1.0, dNaN}});
  // 16-bit: NaNs come out quiet (0x7c01 -> 0x7e01), payload and sign kept.
  expectPairs<uint16_t>(isa, DataType::kFloat16, RedOp::kMax,
                        {{0x8000, 0x0000, 0x0000},
                         {0x0000, 0x8000, 0x0000},
                         {0x7c01, 0x3c00, 0x7e01},
                         {0x3c00, 0xfc05, 0xfe05},
                         {0x7c01, 0xfc05, 0x7e01}});
  expectPairs<uint16_t>(isa, DataType::kBfloat16, RedOp::kMin,
                        {{0x8000, 0x0000, 0x8000},
                         {0x0000, 0x8000, 0x8000},
                         {0x7f81, 0x3f80, 0x7fc1},
                         {0x3f80, 0xff85, 0xffc5},
                         {0xff85, 0x7f81, 0xffc5}});
}

// finishAverage: x / divisor for every element, in place and not, against the reference (a NaN
// comes out quiet, anything else is the correctly rounded quotient) and the portable kernels.
template <DataType D>
void checkFinishAverage(CpuIsa isa, Rng& rng) {
  using X = Traits<D>;
  using S = typename X::S;
  for (const size_t divisor : {size_t{3}, size_t{7}}) {
    for (size_t n = 0; n <= 1001; n += (n < 70 ? 1 : 931)) {
      for (const bool inPlace : {false, true}) {
        SCOPED_TRACE(testing::Message() << cpuIsaName(isa) << " " << dataTypeName(D) << " n=" << n
                                        << " divisor " << divisor << (inPlace ? " in place" : ""));
        std::vector<S> in(n + 1), out(n + 1), portable(n + 1);
        for (S& v : in) v = randomInput<D>(rng);
        const std::vector<S> original = in;
        S* dst = inPlace ? in.data() + 1 : out.data() + 1;
        finishAverageAt(CpuIsa::kPortable, portable.data() + 1, original.data() + 1, n, D,
                        RedOp::kAvg, divisor);
        finishAverageAt(isa, dst, in.data() + 1, n, D, RedOp::kAvg, divisor);
        for (size_t i = 0; i < n; ++i) {
          const S x = original[i + 1];
          S expected{};
          if constexpr (X::kFloat) {
            expected = X::isNaN(x) ? X::quietArithmetic(x)
                                   : X::narrow(X::widen(x) / static_cast<typename X::C>(divisor));
          } else {
            expected = static_cast<S>(static_cast<__int128>(x) / static_cast<__int128>(divisor));
          }
          ASSERT_TRUE(sameBits(dst[i], expected) && sameBits(dst[i], portable[i + 1]))
              << "element " << i << ": got 0x" << std::hex << bitsOf(dst[i]) << ", reference 0x"
              << bitsOf(expected) << ", portable 0x" << bitsOf(portable[i + 1]) << " (input 0x"
              << bitsOf(x) << ")";
        }
      }
    }
  }
}

TEST_P(ReduceLevelTest, FinishAverageDividesEveryElement) {
  const CpuIsa isa = GetParam();
  Rng rng(42);
  checkFinishAverage<DataType::kFloat16>(isa, rng);
  checkFinishAverage<DataType::kBfloat16>(isa, rng);
  checkFinishAverage<DataType::kFloat32>(isa, rng);
  checkFinishAverage<DataType::kFloat64>(isa, rng);
  checkFinishAverage<DataType::kInt8>(isa, rng);
  checkFinishAverage<DataType::kInt64>(isa, rng);
}

INSTANTIATE_TEST_SUITE_P(AllLevels, ReduceLevelTest, ::testing::ValuesIn(kAllLevels),
                         [](const ::testing::TestParamInfo<CpuIsa>& p) {
                           return std::string(cpuIsaName(p.param));
                         });

// ---- Choosing the level. ----

TEST(CpuIsaTest, RequestsCanOnlyLowerTheLevel) {
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kAvx512, nullptr).isa, CpuIsa::kAvx512);
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kAvx512, "").isa, CpuIsa::kAvx512);
  for (const CpuIsa wanted : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    const CpuIsaChoice c = chooseCpuIsa(CpuIsa::kAvx512, cpuIsaName(wanted));
    EXPECT_EQ(c.isa, wanted);
    EXPECT_TRUE(c.warning.empty()) << c.warning;
  }
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kAvx2, "PORTABLE").isa, CpuIsa::kPortable);  // any case
  // More than the CPU has: the best it has, with a warning that says so.
  const CpuIsaChoice tooHigh = chooseCpuIsa(CpuIsa::kAvx2, "avx512");
  EXPECT_EQ(tooHigh.isa, CpuIsa::kAvx2);
  EXPECT_NE(tooHigh.warning.find("HOOP_CPU_ISA=avx512"), std::string::npos) << tooHigh.warning;
  EXPECT_NE(tooHigh.warning.find("using avx2"), std::string::npos) << tooHigh.warning;
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kPortable, "avx2").isa, CpuIsa::kPortable);
  // Not a level at all: the best available, and a warning listing the valid names.
  const CpuIsaChoice garbage = chooseCpuIsa(CpuIsa::kAvx512, "sse9");
  EXPECT_EQ(garbage.isa, CpuIsa::kAvx512);
  EXPECT_NE(garbage.warning.find("portable, avx2, avx512"), std::string::npos) << garbage.warning;
  EXPECT_FALSE(parseCpuIsa("avx").has_value());
  EXPECT_EQ(parseCpuIsa("Avx2"), CpuIsa::kAvx2);
  EXPECT_EQ(parseCpuIsa("NEON"), CpuIsa::kNeon);
}

// Levels of different architectures never include each other; portable is in every one.
TEST(CpuIsaTest, ArchitecturesDoNotMix) {
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kNeon, "neon").isa, CpuIsa::kNeon);
  EXPECT_EQ(chooseCpuIsa(CpuIsa::kNeon, "portable").isa, CpuIsa::kPortable);
  const CpuIsaChoice x86OnArm = chooseCpuIsa(CpuIsa::kNeon, "avx2");
  EXPECT_EQ(x86OnArm.isa, CpuIsa::kNeon);
  EXPECT_NE(x86OnArm.warning.find("using neon"), std::string::npos) << x86OnArm.warning;
  const CpuIsaChoice armOnX86 = chooseCpuIsa(CpuIsa::kAvx512, "neon");
  EXPECT_EQ(armOnX86.isa, CpuIsa::kAvx512);
  EXPECT_NE(armOnX86.warning.find("HOOP_CPU_ISA=neon"), std::string::npos) << armOnX86.warning;
  EXPECT_FALSE(cpuIsaIncludes(CpuIsa::kAvx512, CpuIsa::kNeon));
  EXPECT_FALSE(cpuIsaIncludes(CpuIsa::kNeon, CpuIsa::kAvx2));
  EXPECT_FALSE(cpuIsaIncludes(CpuIsa::kAvx2, CpuIsa::kAvx512));
  EXPECT_TRUE(cpuIsaIncludes(CpuIsa::kAvx512, CpuIsa::kAvx2));
  for (const CpuIsa isa : kAllLevels) EXPECT_TRUE(cpuIsaIncludes(isa, CpuIsa::kPortable));
}

// The SIMD level a 64-bit ARM machine must find, so the NEON kernels above run instead of
// being skipped (every aarch64 Linux CPU has Advanced SIMD; QEMU's user mode reports it too).
TEST(CpuIsaTest, Aarch64DetectsNeon) {
#if defined(__aarch64__)
  EXPECT_EQ(detectCpuIsa(), CpuIsa::kNeon);
#else
  GTEST_SKIP() << "not an aarch64 build";
#endif
}

// CTest also runs this with HOOP_CPU_ISA=portable and =avx2 (aarch64: =neon), see
// tests/device/CMakeLists.txt.
TEST(CpuIsaTest, ActiveLevelFollowsTheEnvironment) {
  const CpuIsa expected = chooseCpuIsa(detectCpuIsa(), std::getenv("HOOP_CPU_ISA")).isa;
  EXPECT_EQ(activeCpuIsa(), expected);
  // And reduce() runs that level: a -0/+0 max is a cheap probe that every level gets right, so
  // check the entry points at least agree with the forced call.
  const float a[3] = {-0.0f, 1.0f, std::bit_cast<float>(0x7fc00001u)};
  const float b[3] = {0.0f, 2.0f, 3.0f};
  float viaReduce[3], viaCopy[3], second[3];
  reduce(viaReduce, a, b, 3, DataType::kFloat32, RedOp::kMax);
  reduceCopy(viaCopy, second, a, b, 3, DataType::kFloat32, RedOp::kMax);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(sameBits(viaReduce[i], viaCopy[i]));
    EXPECT_TRUE(sameBits(viaReduce[i], second[i]));
  }
  EXPECT_TRUE(sameBits(viaReduce[0], 0.0f));
  EXPECT_EQ(viaReduce[1], 2.0f);
  EXPECT_EQ(bitsOf(viaReduce[2]), 0x7fc00001u);
}

}  // namespace
}  // namespace hoop
