// The allreduce cost model: which schedule it predicts fastest for shapes whose answer is known
// from measurement (bench/RESULTS.md), and its environment overrides.
#include "algorithms/tuner.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace hoop {
namespace {

std::string fastest(const CallShape& shape, const CostModel& model = {},
                    std::vector<std::string> names = {"ring", "direct", "oneshot", "hierarchical",
                                                      "recdoubling", "rabenseifner"}) {
  std::string best;
  double bestUs = std::numeric_limits<double>::infinity();
  for (const std::string& name : names) {
    if (name == "oneshot" && !(shape.sharedMemory && shape.bytes <= 8192)) continue;  // fits()
    if (auto us = predictAllReduceUs(name, shape, model); us && *us < bestUs) {
      best = name;
      bestUs = *us;
    }
  }
  return best;
}

CallShape oneHost(size_t bytes, size_t ranks, bool shm) { return {bytes, ranks, 1, ranks, shm}; }

TEST(CostModel, SmallMessagesTakeTheFewestSteps) {
  EXPECT_EQ(fastest(oneHost(8, 2, true)), "oneshot");
  EXPECT_EQ(fastest(oneHost(4096, 4, true)), "oneshot");
  // Over TCP a small message is all latency: one step beats log2(n) rounds and 2(n-1) steps.
  EXPECT_EQ(fastest(oneHost(8, 4, false)), "direct");
  EXPECT_EQ(fastest(oneHost(8, 8, false)), "direct");
}

TEST(CostModel, LargeMessagesTakeTheBandwidthOptimalRing) {
  for (size_t ranks : {2, 3, 4, 8}) {
    EXPECT_EQ(fastest(oneHost(64 << 20, ranks, false), {}, {"ring", "direct", "recdoubling"}),
              "ring")
        << ranks;
    EXPECT_EQ(fastest(oneHost(64 << 20, ranks, true), {}, {"ring", "direct", "oneshot"}), "ring")
        << ranks;
  }
}

TEST(CostModel, SeveralHostsWithSeveralRanksEachGoHierarchicalForLargeMessages) {
  const CallShape twoByTwo{64 << 20, 4, 2, 2, false};
  EXPECT_EQ(fastest(twoByTwo, {}, {"ring", "direct", "hierarchical"}), "hierarchical");
  const CallShape unequal{64 << 20, 4, 2, 0, false};
  EXPECT_EQ(predictAllReduceUs("hierarchical", unequal, {}), std::nullopt);
}

TEST(CostModel, PredictionsGrowWithSizeAndUnknownNamesAreNone) {
  for (const char* name : {"ring", "direct", "oneshot", "recdoubling"}) {
    const double small = *predictAllReduceUs(name, oneHost(1024, 4, true), {});
    const double large = *predictAllReduceUs(name, oneHost(1 << 20, 4, true), {});
    EXPECT_LT(small, large) << name;
  }
  EXPECT_EQ(predictAllReduceUs("tree", oneHost(8, 4, true), {}), std::nullopt);
  EXPECT_EQ(predictAllReduceUs("rabenseifner", oneHost(8, 4, true), {}), std::nullopt);
  EXPECT_EQ(*predictAllReduceUs("ring", oneHost(1 << 20, 1, true), {}), 0.0);
}

TEST(CostModel, EnvironmentOverridesAndTheirErrors) {
  setenv("HOOP_TUNE_TCP", "1,40", 1);  // a fast network: the ring wins sooner
  setenv("HOOP_TUNE_REDUCE", "20", 1);
  CostModel model = CostModel::fromEnvironment();
  EXPECT_DOUBLE_EQ(model.tcp.alphaUs, 1.0);
  EXPECT_DOUBLE_EQ(model.tcp.bytesPerUs, 40000.0);
  EXPECT_DOUBLE_EQ(model.reduceBytesPerUs, 20000.0);
  for (const char* bad : {"1", "x,2", "1,0", "-1,2", "1,2,3"}) {
    setenv("HOOP_TUNE_SHM", bad, 1);
    try {
      CostModel::fromEnvironment();
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(std::string("HOOP_TUNE_SHM='") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
  unsetenv("HOOP_TUNE_SHM");
  unsetenv("HOOP_TUNE_TCP");
  unsetenv("HOOP_TUNE_REDUCE");
}

}  // namespace
}  // namespace hoop
