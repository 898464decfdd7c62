#include "results.h"

#include <gtest/gtest.h>

#include <vector>

namespace hoop::perf {
namespace {

TEST(LatencyStats, OddCountMedianIsTheMiddle) {
  const LatencyStats s = latencyStats({5.0, 1.0, 3.0});
  EXPECT_DOUBLE_EQ(s.medianUs, 3.0);
  EXPECT_DOUBLE_EQ(s.minUs, 1.0);
  EXPECT_DOUBLE_EQ(s.maxUs, 5.0);
  EXPECT_DOUBLE_EQ(s.p99Us, 5.0);
}

TEST(LatencyStats, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  EXPECT_DOUBLE_EQ(latencyStats({4.0, 1.0, 2.0, 8.0}).medianUs, 3.0);
}

TEST(LatencyStats, P99IsTheNearestRank) {
  // 1..200: ceil(0.99 * 200) = 198th smallest.
  std::vector<double> times;
  for (int i = 200; i >= 1; --i) times.push_back(i);
  const LatencyStats s = latencyStats(times);
  EXPECT_DOUBLE_EQ(s.p99Us, 198.0);
  EXPECT_DOUBLE_EQ(s.medianUs, 100.5);
  // 1..20 (the default -n): ceil(19.8) = 20th, the maximum.
  times.assign({});
  for (int i = 1; i <= 20; ++i) times.push_back(i);
  EXPECT_DOUBLE_EQ(latencyStats(times).p99Us, 20.0);
  // 1..101: ceil(99.99) = 100th.
  times.clear();
  for (int i = 1; i <= 101; ++i) times.push_back(i);
  EXPECT_DOUBLE_EQ(latencyStats(times).p99Us, 100.0);
}

TEST(LatencyStats, OneAndNone) {
  const LatencyStats one = latencyStats({7.5});
  EXPECT_DOUBLE_EQ(one.medianUs, 7.5);
  EXPECT_DOUBLE_EQ(one.p99Us, 7.5);
  EXPECT_DOUBLE_EQ(one.minUs, 7.5);
  EXPECT_DOUBLE_EQ(one.maxUs, 7.5);
  const LatencyStats none = latencyStats({});
  EXPECT_DOUBLE_EQ(none.medianUs, 0.0);
  EXPECT_DOUBLE_EQ(none.maxUs, 0.0);
}

}  // namespace
}  // namespace hoop::perf
