#include "timed_iterations.h"

#include <gtest/gtest.h>

namespace hoop::perf {
namespace {

// -m fills its seconds at the first -n's pace, never with fewer than -n, and stops at a million.
TEST(TimedIterations, FillTheSecondsAskedAtTheFirstItersPace) {
  EXPECT_EQ(iterationsToFill(20, 0.2, 20 * 0.5), 400000u);  // 0.5 us a call
  EXPECT_EQ(iterationsToFill(20, 0.2, 20 * 100.0), 2000u);  // 100 us a call
  EXPECT_EQ(iterationsToFill(20, 0.2, 20 * 20000.0), 20u);  // already past 0.2 s
  EXPECT_EQ(iterationsToFill(20, 0, 20 * 0.5), 20u);        // -m 0: -n alone
  EXPECT_EQ(iterationsToFill(20, 0.2, 20 * 0.1), kMostTimedIterations);
  EXPECT_EQ(iterationsToFill(20, 0.2, 0), kMostTimedIterations);  // a clock that did not move
  EXPECT_EQ(iterationsToFill(2'000'000, 10, 1), 2'000'000u);      // -n above the bound stands
  EXPECT_EQ(iterationsToFill(0, 0.2, 0), 0u);
}

}  // namespace
}  // namespace hoop::perf
