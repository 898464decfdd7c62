// How many timed iterations a size gets under -m (options.h): enough to fill the seconds asked,
// judged by the first -n.
#pragma once

#include <cstddef>

namespace hoop::perf {

// The most iterations -m asks for a size (8 MB of iteration times), unless -n asks for more.
inline constexpr size_t kMostTimedIterations = 1'000'000;

// The timed iterations that fill minSeconds when the first `iters` took firstItersUs in all: at
// least iters, at most kMostTimedIterations (or iters, if that is more).
size_t iterationsToFill(size_t iters, double minSeconds, double firstItersUs);

}  // namespace hoop::perf
