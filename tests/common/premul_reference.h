// A premultiplied sum's inputs, factors and exact results (hoopRedOpCreatePreMulSum): small
// integers, so every product and sum is exact in every type, fp16 and bf16 included, for up to 8
// ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "reference.h"

namespace hoop::test {

// Rank `rank`'s factor: negative on odd ranks of signed types, so a sign lost on the way shows.
inline int64_t premulFactor(DataType t, int rank) {
  return isSignedType(t) && rank % 2 == 1 ? -(rank + 1) : rank + 2;
}

inline int64_t premulInput(DataType t, int rank, size_t i) {
  const auto k = static_cast<int64_t>((static_cast<size_t>(rank) + i) % 5);
  return isSignedType(t) ? k - 2 : k;
}

// One element of type t holding rank's factor.
inline std::vector<char> premulFactorBytes(DataType t, int rank) {
  std::vector<char> bytes(dataTypeSize(t));
  storeValue(t, premulFactor(t, rank), bytes.data());
  return bytes;
}

inline std::vector<char> premulInputs(DataType t, int rank, size_t count) {
  std::vector<char> data(count * dataTypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    storeValue(t, premulInput(t, rank, i), data.data() + i * dataTypeSize(t));
  }
  return data;
}

// Elements [first, first + count) of the sum over `nranks` ranks of input times factor.
inline std::vector<char> premulExpected(DataType t, int nranks, size_t count, size_t first = 0) {
  std::vector<char> data(count * dataTypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    int64_t sum = 0;
    for (int r = 0; r < nranks; ++r) sum += premulInput(t, r, first + i) * premulFactor(t, r);
    storeValue(t, sum, data.data() + i * dataTypeSize(t));
  }
  return data;
}

}  // namespace hoop::test
