#include "results.h"

#include <algorithm>

namespace hoop::perf {

LatencyStats latencyStats(std::vector<double> iterationUs) {
  LatencyStats stats;
  const size_t n = iterationUs.size();
  if (n == 0) return stats;
  std::sort(iterationUs.begin(), iterationUs.end());
  stats.minUs = iterationUs.front();
  stats.maxUs = iterationUs.back();
  stats.medianUs =
      n % 2 == 1 ? iterationUs[n / 2] : (iterationUs[n / 2 - 1] + iterationUs[n / 2]) / 2;
  // Nearest rank, in integers so 0.99 * n has no rounding to argue about: ceil(99n / 100).
  const size_t rank = (99 * n + 99) / 100;
  stats.p99Us = iterationUs[rank - 1];
  return stats;
}

}  // namespace hoop::perf
