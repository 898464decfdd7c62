// The CPU reduction kernels against a scalar reference written here from the documented
// semantics (reduce.h): integers through 128-bit modular arithmetic, floats through double and
// the format definitions in reference_formats.h. Inputs are integer-valued (or exact dyadic
// averages), so every expected result is exact and compared bit for bit.
#include "device/cpu/reduce.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "base/types.h"
#include "reference_formats.h"

namespace hoop {
namespace {

using Rng = std::mt19937_64;
using u128 = unsigned __int128;
using i128 = __int128;

constexpr DataType kAllTypes[] = {DataType::kInt8,    DataType::kUint8,   DataType::kInt32,
                                  DataType::kUint32,  DataType::kInt64,   DataType::kUint64,
                                  DataType::kFloat16, DataType::kFloat32, DataType::kFloat64,
                                  DataType::kBfloat16};
constexpr RedOp kAllOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};

// ---- Per-type description for the reference. ----

template <DataType D>
struct TypeInfo;

template <typename T>
struct IntegerInfo {
  using S = T;
  static constexpr bool kInteger = true;
  static constexpr int kRange = 0;  // unused: integer inputs span the whole type
};
template <>
struct TypeInfo<DataType::kInt8> : IntegerInfo<int8_t> {};
template <>
struct TypeInfo<DataType::kUint8> : IntegerInfo<uint8_t> {};
template <>
struct TypeInfo<DataType::kInt32> : IntegerInfo<int32_t> {};
template <>
struct TypeInfo<DataType::kUint32> : IntegerInfo<uint32_t> {};
template <>
struct TypeInfo<DataType::kInt64> : IntegerInfo<int64_t> {};
template <>
struct TypeInfo<DataType::kUint64> : IntegerInfo<uint64_t> {};

// Floats: inputs are integers in [-kRange, kRange], chosen so sums, products and the averages the
// sweep makes are exactly representable.
template <>
struct TypeInfo<DataType::kFloat16> {
  using S = uint16_t;
  static constexpr bool kInteger = false;
  static constexpr int kRange = 16;  // products <= 256, 11 significant bits available
  static double value(S s) { return reference::halfValue(s); }
  static std::optional<S> encode(double v) { return reference::exactHalf(v); }
};
template <>
struct TypeInfo<DataType::kBfloat16> {
  using S = uint16_t;
  static constexpr bool kInteger = false;
  static constexpr int kRange = 15;  // products <= 225, 8 significant bits available
  static double value(S s) { return reference::bf16Value(s); }
  static std::optional<S> encode(double v) { return reference::exactBf16(v); }
};
template <>
struct TypeInfo<DataType::kFloat32> {
  using S = float;
  static constexpr bool kInteger = false;
  static constexpr int kRange = 1000;
  static double value(S s) { return s; }
  static std::optional<S> encode(double v) {
    const auto f = static_cast<float>(v);
    if (static_cast<double>(f) != v) return std::nullopt;
    return f;
  }
};
template <>
struct TypeInfo<DataType::kFloat64> {
  using S = double;
  static constexpr bool kInteger = false;
  static constexpr int kRange = 1000000;
  static double value(S s) { return s; }
  static std::optional<S> encode(double v) { return v; }
};

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

// ---- Reference. ----

// Integers: exact arithmetic modulo 2^128, then reduced modulo 2^bits into the type's range.
template <typename I>
u128 modular(I x) {
  return static_cast<u128>(static_cast<i128>(x));
}

template <typename I>
I fromModular(u128 v) {
  constexpr int kBits = 8 * sizeof(I);
  const u128 low = v & ((u128{1} << kBits) - 1);
  auto value = static_cast<i128>(low);
  if (std::is_signed_v<I> && low >= (u128{1} << (kBits - 1))) value -= i128{1} << kBits;
  return static_cast<I>(value);
}

template <typename I>
I referenceInteger(I a, I b, RedOp op, bool final, size_t divisor) {
  switch (op) {
    case RedOp::kSum: return fromModular<I>(modular(a) + modular(b));
    case RedOp::kProd: return fromModular<I>(modular(a) * modular(b));
    case RedOp::kMax: return a > b ? a : b;
    case RedOp::kMin: return a < b ? a : b;
    case RedOp::kAvg: {
      const I sum = fromModular<I>(modular(a) + modular(b));
      if (!final) return sum;
      if constexpr (std::is_signed_v<I>) {
        return static_cast<I>(static_cast<int64_t>(sum) / static_cast<int64_t>(divisor));
      } else {
        return static_cast<I>(static_cast<uint64_t>(sum) / static_cast<uint64_t>(divisor));
      }
    }
  }
  return 0;
}

template <DataType D>
std::optional<typename TypeInfo<D>::S> referenceFloat(typename TypeInfo<D>::S a,
                                                      typename TypeInfo<D>::S b, RedOp op,
                                                      bool final, size_t divisor) {
  using Info = TypeInfo<D>;
  const double x = Info::value(a);
  const double y = Info::value(b);
  double r = 0;
  switch (op) {
    case RedOp::kSum: r = x + y; break;
    case RedOp::kProd: r = x * y; break;
    case RedOp::kMax: r = x > y ? x : y; break;
    case RedOp::kMin: r = x < y ? x : y; break;
    case RedOp::kAvg: r = final ? (x + y) / static_cast<double>(divisor) : x + y; break;
  }
  return Info::encode(r);
}

// ---- Inputs. ----

template <DataType D>
typename TypeInfo<D>::S randomValue(Rng& rng, int range) {
  using Info = TypeInfo<D>;
  using S = typename Info::S;
  if constexpr (Info::kInteger) {
    // Full range, so sums and products wrap. (uniform_int_distribution does not take 8-bit types.)
    using Wide = std::conditional_t<std::is_signed_v<S>, int64_t, uint64_t>;
    std::uniform_int_distribution<Wide> dist(std::numeric_limits<S>::min(),
                                             std::numeric_limits<S>::max());
    return static_cast<S>(dist(rng));
  } else {
    std::uniform_int_distribution<int> dist(-range, range);
    return *Info::encode(dist(rng));
  }
}

bool isPowerOfTwo(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

// Fills a[i], b[i] for one call (a and b may be the same array). For a float average with a
// divisor that is not a power of two, b is chosen so a + b is a multiple of the divisor: the
// exact average is then an integer.
template <DataType D>
void fillInputs(typename TypeInfo<D>::S* a, typename TypeInfo<D>::S* b, size_t n, RedOp op,
                bool final, size_t divisor, Rng& rng) {
  using Info = TypeInfo<D>;
  for (size_t i = 0; i < n; ++i) {
    if constexpr (!Info::kInteger) {
      if (op == RedOp::kAvg && final && !isPowerOfTwo(divisor)) {
        const int half = Info::kRange / 2;
        const int d = static_cast<int>(divisor);
        std::uniform_int_distribution<int> aDist(-half, half);
        std::uniform_int_distribution<int> qDist(-half / d, half / d);
        if (a == b) {  // one value, added to itself: make it the multiple
          a[i] = *Info::encode(qDist(rng) * d);
          continue;
        }
        const int av = aDist(rng);
        a[i] = *Info::encode(av);
        b[i] = *Info::encode(qDist(rng) * d - av);
        continue;
      }
    }
    a[i] = randomValue<D>(rng, Info::kRange);
    b[i] = randomValue<D>(rng, Info::kRange);
  }
}

// ---- One call, checked. ----

enum class Alias { kNone, kOutIsA, kOutIsB, kAllSame, kInputsSame };

const char* aliasName(Alias alias) {
  switch (alias) {
    case Alias::kNone: return "distinct";
    case Alias::kOutIsA: return "out==a";
    case Alias::kOutIsB: return "out==b";
    case Alias::kAllSame: return "out==a==b";
    case Alias::kInputsSame: return "a==b";
  }
  return "?";
}

constexpr size_t kGuard = 5;  // elements after the range that must stay untouched

template <DataType D>
void checkOneCall(RedOp op, size_t n, Alias alias, size_t offset, bool final, size_t divisor,
                  Rng& rng) {
  using Info = TypeInfo<D>;
  using S = typename Info::S;
  std::ostringstream what;
  what << dataTypeName(D) << " " << redOpName(op) << (final ? " reduceFinal/" : " reduce")
       << (final ? std::to_string(divisor) : "") << " n=" << n << " " << aliasName(alias)
       << " offset=" << offset;
  SCOPED_TRACE(what.str());

  const size_t size = offset + n + kGuard;
  std::vector<S> bufA(size), bufB(size), bufOut(size);
  for (auto* buf : {&bufA, &bufB, &bufOut}) {
    for (S& v : *buf) v = randomValue<D>(rng, 100);
  }
  S* a = bufA.data() + offset;
  S* b = bufB.data() + offset;
  S* out = bufOut.data() + offset;
  switch (alias) {
    case Alias::kNone: break;
    case Alias::kOutIsA: out = a; break;
    case Alias::kOutIsB: out = b; break;
    case Alias::kAllSame: out = b = a; break;
    case Alias::kInputsSame: b = a; break;
  }
  fillInputs<D>(a, b, n, op, final, divisor, rng);

  std::vector<S> expected(n);
  for (size_t i = 0; i < n; ++i) {
    if constexpr (Info::kInteger) {
      expected[i] = referenceInteger(a[i], b[i], op, final, divisor);
    } else {
      const auto r = referenceFloat<D>(a[i], b[i], op, final, divisor);
      ASSERT_TRUE(r.has_value()) << "test bug: inexact reference at " << i;
      expected[i] = *r;
    }
  }
  const std::vector<S> beforeA = bufA, beforeB = bufB, beforeOut = bufOut;

  if (final) {
    reduceFinal(out, a, b, n, D, op, divisor);
  } else {
    reduce(out, a, b, n, D, op);
  }

  for (size_t i = 0; i < n; ++i) {
    if (!sameBits(out[i], expected[i])) {
      ADD_FAILURE() << "element " << i << ": got bits 0x" << std::hex << bitsOf(out[i])
                    << ", expected 0x" << bitsOf(expected[i]) << " (inputs 0x" << bitsOf(a[i])
                    << ", 0x" << bitsOf(b[i]) << ")";
      break;
    }
  }
  // Nothing but out[0, n) may change: not the guard elements, not an input that is not out.
  const std::vector<S>* buffers[] = {&bufA, &bufB, &bufOut};
  const std::vector<S>* befores[] = {&beforeA, &beforeB, &beforeOut};
  for (int k = 0; k < 3; ++k) {
    const std::vector<S>& now = *buffers[k];
    const bool holdsOut = now.data() + offset == out;
    for (size_t i = 0; i < size; ++i) {
      if (holdsOut && i >= offset && i < offset + n) continue;
      if (!sameBits(now[i], (*befores[k])[i])) {
        ADD_FAILURE() << "buffer "
                      << "abo"[k] << " element " << i << " changed";
        break;
      }
    }
  }
}

template <DataType D>
void sweep(RedOp op) {
  Rng rng(static_cast<uint64_t>(D) * 131 + static_cast<uint64_t>(op));
  std::vector<size_t> divisors = {1, 2, 3, 4, 7, 8};
  if (TypeInfo<D>::kInteger) {
    divisors.push_back(200);
    divisors.push_back(size_t{1} << 20);
  }
  auto runAll = [&](size_t n, const std::vector<Alias>& aliases,
                    const std::vector<size_t>& offsets) {
    for (const Alias alias : aliases) {
      for (const size_t offset : offsets) {
        checkOneCall<D>(op, n, alias, offset, /*final=*/false, 1, rng);
        if (op == RedOp::kAvg) {
          for (const size_t d : divisors) checkOneCall<D>(op, n, alias, offset, true, d, rng);
        } else {
          checkOneCall<D>(op, n, alias, offset, /*final=*/true, 5, rng);  // divisor ignored
        }
      }
    }
  };
  for (size_t n = 0; n <= 67; ++n) {
    runAll(n, {Alias::kNone, Alias::kOutIsA, Alias::kOutIsB, Alias::kAllSame, Alias::kInputsSame},
           {0, 1});
  }
  for (const size_t n : {size_t{257}, size_t{1000}, size_t{4099}, size_t{65541}}) {
    runAll(n, {Alias::kNone, Alias::kOutIsA, Alias::kOutIsB}, {1});
  }
}

using SweepParam = std::tuple<DataType, RedOp>;
class ReduceSweepTest : public ::testing::TestWithParam<SweepParam> {};

TEST_P(ReduceSweepTest, MatchesReferenceForEveryLengthAliasAndOffset) {
  const auto [type, op] = GetParam();
  switch (type) {
    case DataType::kInt8: sweep<DataType::kInt8>(op); break;
    case DataType::kUint8: sweep<DataType::kUint8>(op); break;
    case DataType::kInt32: sweep<DataType::kInt32>(op); break;
    case DataType::kUint32: sweep<DataType::kUint32>(op); break;
    case DataType::kInt64: sweep<DataType::kInt64>(op); break;
    case DataType::kUint64: sweep<DataType::kUint64>(op); break;
    case DataType::kFloat16: sweep<DataType::kFloat16>(op); break;
    case DataType::kFloat32: sweep<DataType::kFloat32>(op); break;
    case DataType::kFloat64: sweep<DataType::kFloat64>(op); break;
    case DataType::kBfloat16: sweep<DataType::kBfloat16>(op); break;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceSweepTest,
                         ::testing::Combine(::testing::ValuesIn(kAllTypes),
                                            ::testing::ValuesIn(kAllOps)),
                         [](const ::testing::TestParamInfo<SweepParam>& p) {
                           return std::string(dataTypeName(std::get<0>(p.param))) + "_" +
                                  std::string(redOpName(std::get<1>(p.param)));
                         });

// ---- Hand-picked cases. Each case is repeated along a 61-element array so it lands both in the
// vector body and in the scalar tail of the loop. ----

template <typename S>
struct Case {
  S a;
  S b;
  S expected;
};

enum class Call { kReduce, kReduceFinal, kFinishAverage };

template <typename S>
void expectCases(DataType type, RedOp op, Call call, size_t divisor,
                 const std::vector<Case<S>>& cases) {
  constexpr size_t kLength = 61;
  std::vector<S> a(kLength), b(kLength), out(kLength);
  for (size_t i = 0; i < kLength; ++i) {
    a[i] = cases[i % cases.size()].a;
    b[i] = cases[i % cases.size()].b;
  }
  switch (call) {
    case Call::kReduce: reduce(out.data(), a.data(), b.data(), kLength, type, op); break;
    case Call::kReduceFinal:
      reduceFinal(out.data(), a.data(), b.data(), kLength, type, op, divisor);
      break;
    case Call::kFinishAverage:
      finishAverage(out.data(), a.data(), kLength, type, op, divisor);
      break;
  }
  for (size_t i = 0; i < kLength; ++i) {
    const Case<S>& c = cases[i % cases.size()];
    EXPECT_TRUE(sameBits(out[i], c.expected))
        << dataTypeName(type) << " " << redOpName(op) << " divisor " << divisor << " case "
        << i % cases.size() << " at " << i << ": got 0x" << std::hex << bitsOf(out[i])
        << ", expected 0x" << bitsOf(c.expected);
  }
}

TEST(ReduceTest, IntegerSumAndProdWrap) {
  expectCases<int8_t>(DataType::kInt8, RedOp::kSum, Call::kReduce, 1,
                      {{100, 100, -56}, {127, 1, -128}, {-128, -1, 127}, {-128, -128, 0}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kSum, Call::kReduce, 1,
                       {{200, 100, 44}, {255, 1, 0}, {255, 255, 254}});
  expectCases<int8_t>(DataType::kInt8, RedOp::kProd, Call::kReduce, 1,
                      {{16, 16, 0}, {-128, -1, -128}, {15, 17, -1}, {11, 13, -113}, {-7, 9, -63}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kProd, Call::kReduce, 1,
                       {{16, 17, 16}, {255, 255, 1}, {128, 2, 0}});
  constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
  constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
  expectCases<int32_t>(DataType::kInt32, RedOp::kSum, Call::kReduce, 1,
                       {{kInt32Max, 1, kInt32Min}, {kInt32Min, -1, kInt32Max}});
  expectCases<int32_t>(
      DataType::kInt32, RedOp::kProd, Call::kReduce, 1,
      {{65536, 65536, 0}, {kInt32Min, -1, kInt32Min}, {46341, 46341, -2147479015}});
  expectCases<uint32_t>(DataType::kUint32, RedOp::kProd, Call::kReduce, 1,
                        {{0xffffffffu, 0xffffffffu, 1u}, {65536u, 65537u, 65536u}});
  constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
  constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
  expectCases<int64_t>(DataType::kInt64, RedOp::kSum, Call::kReduce, 1,
                       {{kInt64Max, 1, kInt64Min}, {kInt64Min, kInt64Min, 0}});
  expectCases<int64_t>(DataType::kInt64, RedOp::kProd, Call::kReduce, 1,
                       {{kInt64Min, -1, kInt64Min}, {int64_t{1} << 32, int64_t{1} << 32, 0}});
  expectCases<uint64_t>(DataType::kUint64, RedOp::kProd, Call::kReduce, 1,
                        {{~uint64_t{0}, ~uint64_t{0}, 1}, {~uint64_t{0}, 2, ~uint64_t{0} - 1}});
}

TEST(ReduceTest, IntegerMaxMinCompareInTheirOwnSignedness) {
  expectCases<int8_t>(DataType::kInt8, RedOp::kMax, Call::kReduce, 1,
                      {{-1, 1, 1}, {-128, 127, 127}, {-5, -6, -5}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kMax, Call::kReduce, 1,
                       {{255, 1, 255}, {128, 127, 128}});
  expectCases<int64_t>(
      DataType::kInt64, RedOp::kMin, Call::kReduce, 1,
      {{-1, 1, -1}, {std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::min()}});
  expectCases<uint64_t>(DataType::kUint64, RedOp::kMin, Call::kReduce, 1,
                        {{~uint64_t{0}, 1, 1}, {uint64_t{1} << 63, 5, 5}});
}

TEST(ReduceTest, IntegerAverageTruncatesTowardZero) {
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kReduceFinal, 2,
                       {{-3, 0, -1}, {-7, 0, -3}, {7, 0, 3}, {-1, 0, 0}, {-4, -1, -2}, {5, 4, 4}});
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kReduceFinal, 4,
                       {{-8, 1, -1}, {-8, -1, -2}, {9, 0, 2}});
  // The wrapped sum is what gets divided.
  expectCases<int8_t>(DataType::kInt8, RedOp::kAvg, Call::kReduceFinal, 2,
                      {{100, 100, -28}, {-128, 0, -64}, {-101, 0, -50}});
  expectCases<int8_t>(DataType::kInt8, RedOp::kAvg, Call::kReduceFinal, 3,
                      {{-128, 0, -42}, {127, 0, 42}, {-1, -1, 0}});
  expectCases<int8_t>(DataType::kInt8, RedOp::kAvg, Call::kReduceFinal, 200, {{-100, -28, 0}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kAvg, Call::kReduceFinal, 2,
                       {{200, 100, 22}, {255, 0, 127}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kAvg, Call::kReduceFinal, 200, {{255, 0, 1}});
  expectCases<uint32_t>(DataType::kUint32, RedOp::kAvg, Call::kReduceFinal, 2,
                        {{0xffffffffu, 0u, 0x7fffffffu}, {0xffffffffu, 2u, 0u}});
  constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
  expectCases<int64_t>(DataType::kInt64, RedOp::kAvg, Call::kReduceFinal, 2,
                       {{kInt64Min, 0, kInt64Min / 2}, {-3, 0, -1}});
  // Divisors beyond the type's range still divide exactly.
  expectCases<int64_t>(
      DataType::kInt64, RedOp::kAvg, Call::kReduceFinal, size_t{1} << 63,
      {{kInt64Min, 0, -1}, {-1, 0, 0}, {std::numeric_limits<int64_t>::max(), 0, 0}});
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kReduceFinal, size_t{1} << 33,
                       {{std::numeric_limits<int32_t>::min(), 0, 0}});
  expectCases<uint64_t>(DataType::kUint64, RedOp::kAvg, Call::kReduceFinal, 3,
                        {{~uint64_t{0}, 0, ~uint64_t{0} / 3}});
  // reduce() never divides: kAvg is a sum there.
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kReduce, 1, {{-3, -4, -7}, {3, 4, 7}});
  // Other ops ignore the divisor.
  expectCases<int32_t>(DataType::kInt32, RedOp::kSum, Call::kReduceFinal, 2, {{-3, -4, -7}});
}

TEST(ReduceTest, FinishAverage) {
  // Divides for kAvg: integers truncate toward zero, floats divide exactly.
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kFinishAverage, 2,
                       {{-7, 0, -3}, {7, 0, 3}, {-1, 0, 0}});
  expectCases<int8_t>(DataType::kInt8, RedOp::kAvg, Call::kFinishAverage, 3,
                      {{-128, 0, -42}, {127, 0, 42}});
  expectCases<uint8_t>(DataType::kUint8, RedOp::kAvg, Call::kFinishAverage, 2, {{255, 0, 127}});
  expectCases<float>(DataType::kFloat32, RedOp::kAvg, Call::kFinishAverage, 2,
                     {{7.0f, 0, 3.5f}, {-1.0f, 0, -0.5f}});
  expectCases<double>(DataType::kFloat64, RedOp::kAvg, Call::kFinishAverage, 3, {{-9.0, 0, -3.0}});
  expectCases<uint16_t>(DataType::kFloat16, RedOp::kAvg, Call::kFinishAverage, 2,
                        {{0x4700 /*7*/, 0, 0x4300 /*3.5*/}, {0x0001, 0, 0x0000 /*tie to 0*/}});
  expectCases<uint16_t>(DataType::kBfloat16, RedOp::kAvg, Call::kFinishAverage, 4,
                        {{0x40e0 /*7*/, 0, 0x3fe0 /*1.75*/}});
  // Any other op, or a divisor of 1 (or 0, treated as 1): a copy.
  expectCases<int32_t>(DataType::kInt32, RedOp::kSum, Call::kFinishAverage, 2, {{-7, 0, -7}});
  expectCases<float>(DataType::kFloat32, RedOp::kMax, Call::kFinishAverage, 4, {{7.0f, 0, 7.0f}});
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kFinishAverage, 1, {{-7, 0, -7}});
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kFinishAverage, 0, {{-7, 0, -7}});
  expectCases<int32_t>(DataType::kInt32, RedOp::kAvg, Call::kReduceFinal, 0, {{-7, 2, -5}});

  // In place, and the input of an out-of-place call is left alone.
  std::vector<int64_t> data = {-9, 9, 10, -10, 1};
  finishAverage(data.data(), data.data(), data.size(), DataType::kInt64, RedOp::kAvg, 4);
  EXPECT_EQ(data, (std::vector<int64_t>{-2, 2, 2, -2, 0}));
  const std::vector<int64_t> in = {-9, 9};
  std::vector<int64_t> out(2, 77);
  finishAverage(out.data(), in.data(), 2, DataType::kInt64, RedOp::kProd, 4);
  EXPECT_EQ(out, in);
  finishAverage(out.data(), in.data(), 0, DataType::kInt64, RedOp::kAvg, 4);
  EXPECT_EQ(out, in);
}

// ---- Floating specials, per type: NaN propagation and signed zeros. ----

template <DataType D>
struct Specials;
template <>
struct Specials<DataType::kFloat32> {
  static float nanA() { return std::bit_cast<float>(0x7fc00001u); }
  static float nanB() { return std::bit_cast<float>(0xffc00002u); }
  static float quiet(float v) { return v; }
};
template <>
struct Specials<DataType::kFloat64> {
  static double nanA() { return std::bit_cast<double>(uint64_t{0x7ff8000000000001}); }
  static double nanB() { return std::bit_cast<double>(uint64_t{0xfff8000000000002}); }
  static double quiet(double v) { return v; }
};
template <>
struct Specials<DataType::kFloat16> {
  static uint16_t nanA() { return 0x7c01; }  // signaling: comes out quiet
  static uint16_t nanB() { return 0xfe02; }
  static uint16_t quiet(uint16_t v) { return reference::isHalfNaN(v) ? v | 0x200 : v; }
};
template <>
struct Specials<DataType::kBfloat16> {
  static uint16_t nanA() { return 0x7f81; }  // signaling: comes out quiet
  static uint16_t nanB() { return 0xffc2; }
  static uint16_t quiet(uint16_t v) { return reference::isBf16NaN(v) ? v | 0x40 : v; }
};

template <DataType D>
void checkMinMaxSpecials() {
  using Info = TypeInfo<D>;
  using S = typename Info::S;
  using X = Specials<D>;
  auto v = [](double x) { return *Info::encode(x); };
  const double inf = std::numeric_limits<double>::infinity();
  const S pz = v(0.0), nz = v(-0.0), one = v(1.0), minusOne = v(-1.0), pinf = v(inf),
          ninf = v(-inf), nanA = X::nanA(), nanB = X::nanB();
  const S qA = X::quiet(nanA), qB = X::quiet(nanB);
  expectCases<S>(D, RedOp::kMax, Call::kReduce, 1,
                 {{nz, pz, pz},
                  {pz, nz, pz},
                  {nz, nz, nz},
                  {minusOne, nz, nz},
                  {nanA, one, qA},
                  {one, nanA, qA},
                  {nanB, ninf, qB},
                  {pinf, nanB, qB},
                  {nanA, nanB, qA},
                  {nanB, nanA, qB},
                  {ninf, pinf, pinf},
                  {one, minusOne, one}});
  expectCases<S>(D, RedOp::kMin, Call::kReduce, 1,
                 {{nz, pz, nz},
                  {pz, nz, nz},
                  {pz, pz, pz},
                  {one, pz, pz},
                  {nanA, one, qA},
                  {one, nanA, qA},
                  {nanB, ninf, qB},
                  {ninf, nanB, qB},
                  {nanA, nanB, qA},
                  {nanB, nanA, qB},
                  {ninf, pinf, ninf},
                  {one, minusOne, minusOne}});
  // Sum and prod propagate NaN through IEEE arithmetic; inf - inf is NaN.
  S out[3];
  const S a[3] = {nanA, pinf, one};
  const S b[3] = {one, ninf, nanB};
  reduce(out, a, b, 3, D, RedOp::kSum);
  for (const S r : out) EXPECT_NE(Info::value(r), Info::value(r)) << dataTypeName(D);
}

TEST(ReduceTest, FloatMaxMinNaNPropagatesAndSignedZerosAreOrdered) {
  checkMinMaxSpecials<DataType::kFloat16>();
  checkMinMaxSpecials<DataType::kBfloat16>();
  checkMinMaxSpecials<DataType::kFloat32>();
  checkMinMaxSpecials<DataType::kFloat64>();
}

TEST(ReduceTest, SixteenBitFloatsComputeInFp32AndRoundOnce) {
  // fp16: 2048 + 1 = 2049 is a tie between 2048 and 2050: even wins. Overflow goes to inf.
  expectCases<uint16_t>(DataType::kFloat16, RedOp::kSum, Call::kReduce, 1,
                        {{0x6800 /*2048*/, 0x3c00 /*1*/, 0x6800},
                         {0x6800, 0x4200 /*3*/, 0x6802 /*2052*/},
                         {0x7b53 /*60000*/, 0x7b53, 0x7c00},
                         {0xfb53, 0xfb53, 0xfc00}});
  expectCases<uint16_t>(DataType::kFloat16, RedOp::kProd, Call::kReduce, 1,
                        {{0x5cb0 /*300*/, 0x5cb0, 0x7c00},
                         {0x0c00 /*2^-12*/, 0x0c00, 0x0001 /*2^-24, subnormal*/},
                         {0x0c00, 0x8800 /*-2^-13*/, 0x8000 /*-2^-25: tie to -0*/}});
  // fp16 average: the sum 65504 + 65504 overflows fp16 but not the fp32 accumulator.
  expectCases<uint16_t>(DataType::kFloat16, RedOp::kAvg, Call::kReduceFinal, 2,
                        {{0x7bff, 0x7bff, 0x7bff}, {0x3c00, 0x0000, 0x3800 /*0.5*/}});
  // bf16: 256 + 1 ties to 256, 256 + 3 to 260; 3e38 + 3e38 overflows to inf.
  expectCases<uint16_t>(DataType::kBfloat16, RedOp::kSum, Call::kReduce, 1,
                        {{0x4380 /*256*/, 0x3f80 /*1*/, 0x4380},
                         {0x4380, 0x4040 /*3*/, 0x4382 /*260*/},
                         {0x7f62, 0x7f62, 0x7f80}});
  // bf16 has fp32's exponent range, so its fp32 sum can overflow: the average is inf then.
  expectCases<uint16_t>(DataType::kBfloat16, RedOp::kAvg, Call::kReduceFinal, 2,
                        {{0x7f7f, 0x7f7f, 0x7f80}, {0x4040 /*3*/, 0x3f80 /*1*/, 0x4000 /*2*/}});
  // fp32 average is a true division: 21 * (1.0f / 7) is not 3, 21 / 7.0f is.
  expectCases<float>(DataType::kFloat32, RedOp::kAvg, Call::kReduceFinal, 7,
                     {{20.0f, 1.0f, 3.0f}, {42.0f, 7.0f, 7.0f}});
}

// The test's own encoder is what the sweep trusts for every float expectation: check it.
TEST(ReduceTest, ReferenceEncoderRoundTripsEveryFiniteValue) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const auto h = static_cast<uint16_t>(i);
    if (!reference::isHalfNaN(h)) {
      EXPECT_EQ(reference::exactHalf(reference::halfValue(h)), h) << std::hex << i;
    }
    if (!reference::isBf16NaN(h)) {
      EXPECT_EQ(reference::exactBf16(reference::bf16Value(h)), h) << std::hex << i;
    }
  }
  EXPECT_FALSE(reference::exactHalf(1.0 + 0x1p-11).has_value());
  EXPECT_FALSE(reference::exactHalf(65536.0).has_value());
  EXPECT_FALSE(reference::exactHalf(0x1p-25).has_value());
  EXPECT_FALSE(reference::exactBf16(257.0).has_value());
}

}  // namespace
}  // namespace hoop
