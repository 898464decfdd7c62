#include "data.h"

#include <algorithm>
#include <cstring>

#include "dtype.h"

namespace hoop::perf {
namespace {

// splitmix64's finalizer: a cheap bijective scramble, so neighbouring (rank, index) pairs get
// unrelated values and a block landing at the wrong offset is caught.
uint64_t scramble(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

uint64_t hashOf(uint64_t seed, uint64_t rank, uint64_t index) {
  return scramble(scramble(seed ^ index) + 0x9e3779b97f4a7c15ull * (rank + 1));
}

// A rank id no real rank has, for per-element draws that belong to no rank.
constexpr uint64_t kNoRank = ~uint64_t{0} - 1;

// prod: how many ranks contribute a 2 at index. Six at most keeps the product at 64 <= 127.
int twosAt(const DataPattern& pattern, size_t index) {
  const uint64_t maxTwos = static_cast<uint64_t>(std::min(pattern.nranks, 6));
  return static_cast<int>(hashOf(pattern.seed, kNoRank, index) % (maxTwos + 1));
}

int64_t boundedDraw(const DataPattern& pattern, int rank, size_t index, int64_t maxValue) {
  return static_cast<int64_t>(hashOf(pattern.seed, static_cast<uint64_t>(rank), index) %
                              static_cast<uint64_t>(maxValue + 1));
}

// avg: each rank's draw before the last rank's top-up; the sum stays <= n * max + n - 1 <= 127.
int64_t avgDraw(const DataPattern& pattern, int rank, size_t index) {
  const int n = pattern.nranks;
  const int64_t maxValue = n <= kMaxExactRanks ? (kMaxExactRanks - n) / n : 0;
  return boundedDraw(pattern, rank, index, maxValue);
}

template <typename T, typename Expected>
size_t countWrongTyped(const void* buffer, size_t count, Expected expected) {
  const T* data = static_cast<const T*>(buffer);
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    if (toDouble(data[i]) != static_cast<double>(expected(i))) ++wrong;
  }
  return wrong;
}

}  // namespace

int64_t inputValue(const DataPattern& pattern, int rank, size_t index) {
  const int n = pattern.nranks;
  if (!pattern.op) return boundedDraw(pattern, rank, index, 127);
  switch (*pattern.op) {
    case hoopSum: return boundedDraw(pattern, rank, index, 127 / n);
    case hoopProd: {
      // Rotating by index spreads the twos over the ranks; exactly twosAt ranks get one.
      const size_t slot =
          (index % static_cast<size_t>(n) + static_cast<size_t>(rank)) % static_cast<size_t>(n);
      return slot < static_cast<size_t>(twosAt(pattern, index)) ? 2 : 1;
    }
    case hoopAvg: {
      const int64_t draw = avgDraw(pattern, rank, index);
      if (rank != n - 1) return draw;
      // The last rank tops the sum up to a multiple of n, so sum / n is exact in every type.
      int64_t sum = draw;
      for (int r = 0; r < n - 1; ++r) sum += avgDraw(pattern, r, index);
      return draw + (n - sum % n) % n;
    }
    case hoopMax:
    case hoopMin:
    default: return boundedDraw(pattern, rank, index, 127);
  }
}

int64_t allToAllValue(const DataPattern& pattern, int source, int dest, size_t count,
                      size_t index) {
  return inputValue(pattern, source, static_cast<size_t>(dest) * count + index);
}

int64_t reducedValue(const DataPattern& pattern, size_t index) {
  const int n = pattern.nranks;
  switch (*pattern.op) {
    case hoopProd: return int64_t{1} << twosAt(pattern, index);
    case hoopMax:
    case hoopMin: {
      int64_t result = inputValue(pattern, 0, index);
      for (int r = 1; r < n; ++r) {
        const int64_t value = inputValue(pattern, r, index);
        result = *pattern.op == hoopMax ? std::max(result, value) : std::min(result, value);
      }
      return result;
    }
    case hoopSum:
    case hoopAvg:
    default: {
      int64_t sum = 0;
      for (int r = 0; r < n; ++r) sum += inputValue(pattern, r, index);
      return *pattern.op == hoopAvg ? sum / n : sum;
    }
  }
}

void fillInputs(hoopDataType_t type, void* buffer, size_t count, const DataPattern& pattern,
                int rank, size_t firstIndex) {
  visitType(type, [&](auto zero) {
    using T = decltype(zero);
    T* data = static_cast<T*>(buffer);
    for (size_t i = 0; i < count; ++i) {
      data[i] = fromInteger<T>(inputValue(pattern, rank, firstIndex + i));
    }
  });
}

size_t countWrongInputs(hoopDataType_t type, const void* buffer, size_t count,
                        const DataPattern& pattern, int sourceRank, size_t firstIndex) {
  return visitType(type, [&](auto zero) {
    return countWrongTyped<decltype(zero)>(
        buffer, count, [&](size_t i) { return inputValue(pattern, sourceRank, firstIndex + i); });
  });
}

size_t countWrongReduced(hoopDataType_t type, const void* buffer, size_t count,
                         const DataPattern& pattern, size_t firstIndex) {
  return visitType(type, [&](auto zero) {
    return countWrongTyped<decltype(zero)>(
        buffer, count, [&](size_t i) { return reducedValue(pattern, firstIndex + i); });
  });
}

void poisonBytes(void* buffer, size_t bytes) { std::memset(buffer, 0xa5, bytes); }

}  // namespace hoop::perf
