// The check data's promise: for every type and op, every rank count up to 8 (and spot checks up
// to kMaxExactRanks), reducing the inputs in any order in the type's own arithmetic gives exactly
// reducedValue. The arithmetic here rounds after every step (half and bfloat16 through float),
// which is the worst a library can do.
#include "data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "dtype.h"

namespace hoop::perf {
namespace {

template <typename T>
T combine(hoopRedOp_t op, T a, T b) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, Bfloat16>) {
    const float x = static_cast<float>(toDouble(a));
    const float y = static_cast<float>(toDouble(b));
    float r = 0;
    switch (op) {
      case hoopProd: r = x * y; break;
      case hoopMax: r = std::max(x, y); break;
      case hoopMin: r = std::min(x, y); break;
      default: r = x + y; break;  // sum, and avg's sum
    }
    if constexpr (std::is_same_v<T, Half>) {
      return Half{floatToHalf(r)};
    } else {
      return Bfloat16{floatToBfloat16(r)};
    }
  } else {
    // Integers wrap in their own width (an overflow would show as a wrong value); floats round.
    switch (op) {
      case hoopProd: return static_cast<T>(a * b);
      case hoopMax: return std::max(a, b);
      case hoopMin: return std::min(a, b);
      default: return static_cast<T>(a + b);
    }
  }
}

template <typename T>
T divideBy(T value, int n) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{floatToHalf(static_cast<float>(toDouble(value)) / static_cast<float>(n))};
  } else if constexpr (std::is_same_v<T, Bfloat16>) {
    return Bfloat16{floatToBfloat16(static_cast<float>(toDouble(value)) / static_cast<float>(n))};
  } else {
    return static_cast<T>(value / n);
  }
}

// Reduces values[order[0]], values[order[1]], ... left to right.
template <typename T>
T reduceInOrder(hoopRedOp_t op, const std::vector<T>& values, const std::vector<int>& order) {
  T result = values[order[0]];
  for (size_t i = 1; i < order.size(); ++i) result = combine(op, result, values[order[i]]);
  return result;
}

// Reduces as a balanced tree: halves first, then the two halves.
template <typename T>
T reduceTree(hoopRedOp_t op, const std::vector<T>& values, size_t first, size_t last) {
  if (last - first == 1) return values[first];
  const size_t middle = first + (last - first) / 2;
  return combine(op, reduceTree(op, values, first, middle), reduceTree(op, values, middle, last));
}

// The orders a library might use: every rotation (a ring starting at each rank), reversed, and a
// tree. Returns how many results differed from reducedValue.
template <typename T>
int countInexact(hoopRedOp_t op, int nranks, uint64_t seed, size_t indices) {
  const DataPattern pattern{op, nranks, seed};
  int inexact = 0;
  for (size_t index = 0; index < indices; ++index) {
    std::vector<T> values;
    for (int r = 0; r < nranks; ++r) {
      const int64_t input = inputValue(pattern, r, index);
      values.push_back(fromInteger<T>(input));
      if (toDouble(values.back()) != static_cast<double>(input)) ++inexact;  // storage is exact
    }
    const double expected = static_cast<double>(reducedValue(pattern, index));
    std::vector<T> results;
    std::vector<int> order(static_cast<size_t>(nranks));
    for (int start = 0; start < nranks; ++start) {
      for (int i = 0; i < nranks; ++i) order[static_cast<size_t>(i)] = (start + i) % nranks;
      results.push_back(reduceInOrder(op, values, order));
      std::reverse(order.begin(), order.end());
      results.push_back(reduceInOrder(op, values, order));
    }
    results.push_back(reduceTree(op, values, 0, values.size()));
    for (T result : results) {
      if (op == hoopAvg) result = divideBy(result, nranks);
      if (toDouble(result) != expected) ++inexact;
    }
  }
  return inexact;
}

TEST(CheckData, ExactForEveryTypeOpAndUpTo8Ranks) {
  for (hoopDataType_t type : kAllTypes) {
    for (hoopRedOp_t op : kAllOps) {
      for (int nranks = 1; nranks <= 8; ++nranks) {
        for (uint64_t seed : {uint64_t{1}, uint64_t{0x5eed5eed5eedull}}) {
          const int inexact = visitType(type, [&](auto zero) {
            return countInexact<decltype(zero)>(op, nranks, seed, 1000);
          });
          EXPECT_EQ(inexact, 0) << typeName(type) << " " << opName(op) << " nranks " << nranks;
        }
      }
    }
  }
}

TEST(CheckData, ExactForLargeRankCounts) {
  for (hoopDataType_t type : kAllTypes) {
    for (hoopRedOp_t op : kAllOps) {
      for (int nranks : {16, 63, 64, kMaxExactRanks}) {
        const int inexact = visitType(
            type, [&](auto zero) { return countInexact<decltype(zero)>(op, nranks, 7, 20); });
        EXPECT_EQ(inexact, 0) << typeName(type) << " " << opName(op) << " nranks " << nranks;
      }
    }
  }
}

TEST(CheckData, ValuesStayInTheirRanges) {
  for (int nranks = 1; nranks <= kMaxExactRanks; ++nranks) {
    for (hoopRedOp_t op : kAllOps) {
      const DataPattern pattern{op, nranks, 42};
      for (size_t index = 0; index < 50; ++index) {
        int64_t sum = 0;
        for (int r = 0; r < nranks; ++r) {
          const int64_t value = inputValue(pattern, r, index);
          ASSERT_GE(value, 0);
          ASSERT_LE(value, 127);
          sum += value;
        }
        const int64_t result = reducedValue(pattern, index);
        ASSERT_GE(result, 0);
        ASSERT_LE(result, 127);
        if (op == hoopSum || op == hoopAvg) {
          ASSERT_LE(sum, 127) << "nranks " << nranks;
        }
        if (op == hoopAvg) {
          ASSERT_EQ(sum % nranks, 0) << "nranks " << nranks;
        }
      }
    }
  }
}

TEST(CheckData, InputsVaryAcrossRanksIndicesAndSeeds) {
  // A check is only as good as its inputs: a block at the wrong offset, from the wrong rank or
  // left over from an earlier row must differ from the expected values.
  for (std::optional<hoopRedOp_t> op :
       {std::optional<hoopRedOp_t>{}, std::optional<hoopRedOp_t>{hoopSum},
        std::optional<hoopRedOp_t>{hoopProd}, std::optional<hoopRedOp_t>{hoopMax},
        std::optional<hoopRedOp_t>{hoopAvg}}) {
    const DataPattern a{op, 4, 1};
    const DataPattern b{op, 4, 2};
    size_t rankDiffers = 0, indexDiffers = 0, seedDiffers = 0;
    for (size_t i = 0; i < 1000; ++i) {
      rankDiffers += inputValue(a, 0, i) != inputValue(a, 1, i);
      indexDiffers += inputValue(a, 0, i) != inputValue(a, 0, i + 1);
      seedDiffers += inputValue(a, 0, i) != inputValue(b, 0, i);
    }
    EXPECT_GT(rankDiffers, 300u);
    EXPECT_GT(indexDiffers, 300u);
    EXPECT_GT(seedDiffers, 300u);
  }
}

TEST(CheckData, FillThenCountWrong) {
  for (hoopDataType_t type : kAllTypes) {
    const DataPattern pattern{std::nullopt, 3, 9};
    std::vector<unsigned char> buffer(100 * typeSize(type));
    fillInputs(type, buffer.data(), 100, pattern, 2, 50);
    EXPECT_EQ(countWrongInputs(type, buffer.data(), 100, pattern, 2, 50), 0u) << typeName(type);
    EXPECT_GT(countWrongInputs(type, buffer.data(), 100, pattern, 1, 50), 50u) << typeName(type);
    EXPECT_GT(countWrongInputs(type, buffer.data(), 100, pattern, 2, 51), 50u) << typeName(type);
    poisonBytes(buffer.data(), buffer.size());
    EXPECT_EQ(countWrongInputs(type, buffer.data(), 100, pattern, 2, 50), 100u) << typeName(type);
  }
}

// alltoall: the value says who sent it, to whom and where, and stays exact in every type.
TEST(CheckData, AllToAllValuesEncodeSourceDestAndIndex) {
  const DataPattern pattern{std::nullopt, 4, 5};
  const size_t count = 100;
  size_t sourceDiffers = 0, destDiffers = 0, indexDiffers = 0;
  for (size_t i = 0; i < count; ++i) {
    for (int source = 0; source < 4; ++source) {
      for (int dest = 0; dest < 4; ++dest) {
        const int64_t value = allToAllValue(pattern, source, dest, count, i);
        ASSERT_GE(value, 0);
        ASSERT_LE(value, 127);
        // It is the source's input at the dest block, which is what fillInputs writes there.
        EXPECT_EQ(value, inputValue(pattern, source, static_cast<size_t>(dest) * count + i));
      }
    }
    sourceDiffers +=
        allToAllValue(pattern, 0, 1, count, i) != allToAllValue(pattern, 2, 1, count, i);
    destDiffers += allToAllValue(pattern, 0, 1, count, i) != allToAllValue(pattern, 0, 3, count, i);
    indexDiffers +=
        allToAllValue(pattern, 0, 1, count, i) != allToAllValue(pattern, 0, 1, count, i + 1);
  }
  EXPECT_GT(sourceDiffers, 90u);
  EXPECT_GT(destDiffers, 90u);
  EXPECT_GT(indexDiffers, 90u);
  for (hoopDataType_t type : kAllTypes) {
    std::vector<unsigned char> buffer(4 * count * typeSize(type));
    fillInputs(type, buffer.data(), 4 * count, pattern, 2, 0);
    const int wrong = visitType(type, [&](auto zero) {
      const auto* data = reinterpret_cast<const decltype(zero)*>(buffer.data());
      int bad = 0;
      for (size_t j = 0; j < 4 * count; ++j) {
        bad += toDouble(data[j]) != static_cast<double>(allToAllValue(
                                        pattern, 2, static_cast<int>(j / count), count, j % count));
      }
      return bad;
    });
    EXPECT_EQ(wrong, 0) << typeName(type);
  }
}

TEST(CheckData, PoisonNeverEqualsAnExpectedValue) {
  for (hoopDataType_t type : kAllTypes) {
    std::vector<unsigned char> buffer(typeSize(type));
    poisonBytes(buffer.data(), buffer.size());
    const double value = visitType(type, [&](auto zero) {
      return toDouble(*reinterpret_cast<const decltype(zero)*>(buffer.data()));
    });
    EXPECT_TRUE(value < 0 || value > 127 || value != static_cast<double>(static_cast<int>(value)))
        << typeName(type) << " " << value;
  }
}

}  // namespace
}  // namespace hoop::perf
