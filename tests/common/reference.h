// Integer-valued inputs whose exact reductions are known whatever the order of operations, and
// the expected results computed independently of hoop's kernels.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "base/half.h"
#include "base/types.h"

namespace hoop::test {

// Input of `rank` (of `nranks`) at element i for reduction `op`. Small integers: exact in every
// type, fp16 and bf16 included, and sums of up to 8 ranks stay exact.
inline int64_t inputValue(RedOp op, bool isSigned, int rank, int nranks, size_t i) {
  const int64_t r = rank;
  const int64_t k = static_cast<int64_t>(i % 1009);
  switch (op) {
    case RedOp::kSum: return isSigned ? (r + k) % 5 - 2 : (r + k) % 5;
    case RedOp::kProd: {
      int64_t magnitude = (r + k) % 7 == 0 ? 2 : 1;
      return isSigned && (r + 2 * k) % 3 == 0 ? -magnitude : magnitude;
    }
    case RedOp::kMax:
    case RedOp::kMin: return isSigned ? (r * 7 + k * 3) % 11 - 5 : (r * 7 + k * 3) % 11;
    case RedOp::kAvg: {
      // base + d_rank with the d summing to zero: the sum is nranks * base, so the average is
      // exact in every type (and unsigned wraparound cancels out).
      int64_t base = k % 9;
      int64_t d = rank < nranks - 1 ? r : -static_cast<int64_t>(nranks - 1) * (nranks - 2) / 2;
      return base + d;
    }
  }
  return 0;
}

inline bool isSignedType(DataType t) {
  return t == DataType::kInt8 || t == DataType::kInt32 || t == DataType::kInt64 ||
         isFloatingPoint(t);
}

// Stores integer `v` as one element of type t at out (integers wrap modulo 2^bits).
inline void storeValue(DataType t, int64_t v, void* out) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUint8: {
      auto b = static_cast<uint8_t>(static_cast<uint64_t>(v));
      std::memcpy(out, &b, 1);
      return;
    }
    case DataType::kInt32:
    case DataType::kUint32: {
      auto b = static_cast<uint32_t>(static_cast<uint64_t>(v));
      std::memcpy(out, &b, 4);
      return;
    }
    case DataType::kInt64:
    case DataType::kUint64: std::memcpy(out, &v, 8); return;
    case DataType::kFloat16: {
      uint16_t b = floatToHalf(static_cast<float>(v));
      std::memcpy(out, &b, 2);
      return;
    }
    case DataType::kBfloat16: {
      uint16_t b = floatToBf16(static_cast<float>(v));
      std::memcpy(out, &b, 2);
      return;
    }
    case DataType::kFloat32: {
      auto f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      return;
    }
    case DataType::kFloat64: {
      auto d = static_cast<double>(v);
      std::memcpy(out, &d, 8);
      return;
    }
  }
}

inline std::vector<char> makeInput(DataType t, RedOp op, int rank, int nranks, size_t count,
                                   size_t firstIndex = 0) {
  std::vector<char> data(count * dataTypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    storeValue(t, inputValue(op, isSignedType(t), rank, nranks, firstIndex + i),
               data.data() + i * dataTypeSize(t));
  }
  return data;
}

// The exact reduction over all ranks of element i, as an integer, then stored in type t.
// Integer sum and product wrap like the kernels (the stored low bits are the same whatever the
// order); integer avg divides the wrapped sum, as signed or unsigned per the type.
inline void expectedValue(DataType t, RedOp op, int nranks, size_t i, void* out) {
  const bool isSigned = isSignedType(t);
  int64_t acc = inputValue(op, isSigned, 0, nranks, i);
  for (int r = 1; r < nranks; ++r) {
    int64_t v = inputValue(op, isSigned, r, nranks, i);
    switch (op) {
      case RedOp::kSum:
      case RedOp::kAvg:
        acc = static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(v));
        break;
      case RedOp::kProd:
        acc = static_cast<int64_t>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
        break;
      case RedOp::kMax: acc = std::max(acc, v); break;
      case RedOp::kMin: acc = std::min(acc, v); break;
    }
  }
  if (op == RedOp::kAvg) {
    // The sum is exactly nranks * base for every type (see inputValue), so this is exact too.
    acc /= nranks;
  }
  storeValue(t, acc, out);
}

inline std::vector<char> makeExpected(DataType t, RedOp op, int nranks, size_t count,
                                      size_t firstIndex = 0) {
  std::vector<char> data(count * dataTypeSize(t));
  for (size_t i = 0; i < count; ++i) {
    expectedValue(t, op, nranks, firstIndex + i, data.data() + i * dataTypeSize(t));
  }
  return data;
}

// An alltoall's data for `rank`: its input (block j goes to rank j) and what it must receive
// (block j from rank j). Values name (source, destination, element) and stay small integers,
// exact in every type.
struct AllToAllData {
  std::vector<char> input;
  std::vector<char> expected;
};

inline int64_t allToAllValue(int source, int destination, size_t element) {
  return (source * 7 + destination * 3 + static_cast<int64_t>(element % 53)) % 61;
}

inline AllToAllData makeAllToAll(DataType t, int rank, int nranks, size_t count) {
  const size_t size = dataTypeSize(t);
  const size_t blockBytes = count * size;
  AllToAllData data{std::vector<char>(blockBytes * static_cast<size_t>(nranks)), {}};
  data.expected.resize(data.input.size());
  for (int peer = 0; peer < nranks; ++peer) {
    for (size_t e = 0; e < count; ++e) {
      storeValue(t, allToAllValue(rank, peer, e), data.input.data() + peer * blockBytes + e * size);
      storeValue(t, allToAllValue(peer, rank, e),
                 data.expected.data() + peer * blockBytes + e * size);
    }
  }
  return data;
}

// FNV-1a over the bytes: results compared across ranks by a word each.
inline uint64_t fingerprint(const std::vector<char>& data) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : data) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace hoop::test
