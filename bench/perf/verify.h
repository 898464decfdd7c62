// The check of one call: which inputs each rank writes, which outputs it poisons, and which
// elements it compares afterwards, per collective and placement.
#pragma once

#include <cstddef>
#include <cstdint>

#include "buffers.h"
#include "data.h"

namespace hoop::perf {

// The inputs of a check; seed should differ per row and placement.
DataPattern checkPattern(const CallSpec& call, uint64_t seed);

// Writes this rank's inputs where the call reads them and poisons where it writes its result.
void prepareCheck(const CallSpec& call, const DataPattern& pattern, const BufferPair& buffers);

// Wrong elements in this rank's result (0 on ranks without one: reduce's non-roots).
size_t countWrong(const CallSpec& call, const DataPattern& pattern, const BufferPair& buffers);

// Test-only fault: flips the low bit of the first element of this rank's result, which changes
// its value in every type. Does nothing where the rank has no result or the count is 0.
void corruptResult(const CallSpec& call, const BufferPair& buffers);

}  // namespace hoop::perf
