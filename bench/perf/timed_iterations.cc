#include "timed_iterations.h"

#include <algorithm>
#include <cmath>

namespace hoop::perf {

size_t iterationsToFill(size_t iters, double minSeconds, double firstItersUs) {
  if (iters == 0) return 0;
  const double perCallUs = std::max(firstItersUs, 1e-3) / static_cast<double>(iters);
  const double wanted = std::ceil(minSeconds * 1e6 / perCallUs);
  if (wanted >= static_cast<double>(kMostTimedIterations)) {
    return std::max(iters, kMostTimedIterations);
  }
  return std::max(iters, static_cast<size_t>(wanted));
}

}  // namespace hoop::perf
