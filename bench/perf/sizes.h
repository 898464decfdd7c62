// Byte sizes on the command line ("64K") and the sweep of sizes a run measures.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace hoop::perf {

// A decimal count of bytes with an optional K, M or G suffix (either case; powers of 1024, as
// nccl-tests). Nothing else: no sign, no spaces, no fraction. nullopt when malformed or when the
// value does not fit size_t.
std::optional<size_t> parseSize(std::string_view text);

// The sizes from minBytes up to maxBytes inclusive: multiplied by stepFactor when it is above 1,
// else increased by stepBytes (nccl-tests' loop). Stops before a step would overflow size_t, and
// after the first size when a step would not grow it (minBytes 0 with a factor, stepBytes 0).
std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor,
                              size_t stepBytes);

}  // namespace hoop::perf
