// Check data: inputs whose exact result every rank can compute on its own, whatever order the
// library reduces in. All values are small non-negative integers, so every partial result of
// every reduction is exact in every type: int8 holds up to 127, bfloat16 integers up to 256 and
// half up to 2048; the bound that binds is int8's 127.
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace hoop::perf {

// Up to this many ranks every reduction result stays within 127, so checks are exact.
inline constexpr int kMaxExactRanks = 128;

// Which inputs to make. op is the reduction, or nullopt for collectives that only move data
// (then the answer is the input itself). seed changes per row so stale data cannot pass.
struct DataPattern {
  std::optional<hoopRedOp_t> op;
  int nranks = 1;
  uint64_t seed = 0;
};

// Rank `rank`'s input at element `index` (the index into the whole buffer: for reducescatter the
// full nranks-block input). Per op:
//   sum:  in [0, 127/n]                        -> sum <= 127
//   avg:  in [0, (128-n)/n], and the last rank adds up to n-1 so the sum divides by n
//   prod: 1 or 2, with at most 6 twos over the ranks  -> product <= 64
//   max, min and data movement: in [0, 127]
int64_t inputValue(const DataPattern& pattern, int rank, size_t index);

// alltoall: the element `index` of the block `source` sends to `dest`, each block `count` long.
// It is source's input at dest * count + index: the hash behind inputValue mixes the source rank
// with that position, so a block from the wrong rank, for the wrong rank or at the wrong offset
// reads differently, and the value stays a small integer in [0, 127], exact in every type.
int64_t allToAllValue(const DataPattern& pattern, int source, int dest, size_t count, size_t index);

// The exact result of reducing every rank's input at `index` with pattern.op (which is set).
int64_t reducedValue(const DataPattern& pattern, size_t index);

// Writes `rank`'s inputs for elements [firstIndex, firstIndex + count) to buffer[0, count).
void fillInputs(hoopDataType_t type, void* buffer, size_t count, const DataPattern& pattern,
                int rank, size_t firstIndex);

// Elements of buffer[0, count) that differ from sourceRank's input at firstIndex + i.
size_t countWrongInputs(hoopDataType_t type, const void* buffer, size_t count,
                        const DataPattern& pattern, int sourceRank, size_t firstIndex);

// Elements of buffer[0, count) that differ from the reduction at firstIndex + i.
size_t countWrongReduced(hoopDataType_t type, const void* buffer, size_t count,
                         const DataPattern& pattern, size_t firstIndex);

// Fills bytes with 0xA5, which in every type reads as a value no check expects (negative, above
// 127, or not an integer), so an output the library never wrote counts as wrong.
void poisonBytes(void* buffer, size_t bytes);

}  // namespace hoop::perf
