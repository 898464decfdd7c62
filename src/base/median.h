// The median of a few timings: what calibration and the schedule trial report, so that one slow
// sample another process's time slice stretched does not move the figure.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

namespace hoop {

// The middle sample, or the mean of the middle two; 0 for none. Reorders `samples`.
inline double medianOf(std::span<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t middle = samples.size() / 2;
  if (samples.size() % 2 == 1) return samples[middle];
  return (samples[middle - 1] + samples[middle]) / 2;
}

}  // namespace hoop
