// The training engine across real processes: each test starts hooprun with 2 to 4 ranks of
// hoop_train_worker running one suite, and checks every rank reported OK (and, where the suite is
// about an error, that the error was printed).
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "process_runner.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;

ProcessResult runJob(int nranks, const std::string& suite, Env env = {}) {
  ProcessGroup group;
  env["HOOP_SOCKET_IFNAME"] = "lo";
  group.start({HOOP_TEST_HOOPRUN, "-np", std::to_string(nranks), "--timeout", "90",
               HOOP_TRAIN_WORKER, suite},
              env);
  return group.wait(std::chrono::seconds(100)).front();
}

void expectEveryRankOk(const ProcessResult& result, int nranks, const std::string& suite) {
  EXPECT_EQ(result.status, 0) << result.output;
  for (int r = 0; r < nranks; ++r) {
    EXPECT_NE(result.output.find("OK rank " + std::to_string(r) + " " + suite), std::string::npos)
        << "rank " << r << " did not finish " << suite << ":\n"
        << result.output;
  }
  EXPECT_EQ(result.output.find("FAIL"), std::string::npos) << result.output;
}

class Ranks : public ::testing::TestWithParam<int> {};

TEST_P(Ranks, ShuffledSubmissionOrderGivesExactResults) {
  expectEveryRankOk(runJob(GetParam(), "shuffled"), GetParam(), "shuffled");
}

TEST_P(Ranks, ResponseCacheReplacesNameExchangeAfterTheFirstStep) {
  expectEveryRankOk(runJob(GetParam(), "cache"), GetParam(), "cache");
}

TEST_P(Ranks, CollectivesWithUnevenAllGatherCounts) {
  expectEveryRankOk(runJob(GetParam(), "collectives"), GetParam(), "collectives");
}

TEST_P(Ranks, JoinWithUnevenStepCounts) {
  expectEveryRankOk(runJob(GetParam(), "join"), GetParam(), "join");
}

TEST_P(Ranks, GradientReducerAndBroadcastParameters) {
  expectEveryRankOk(runJob(GetParam(), "reducer"), GetParam(), "reducer");
}

INSTANTIATE_TEST_SUITE_P(TwoToFour, Ranks, ::testing::Values(2, 3, 4));

TEST(Callbacks, WhenDoneCompletesWithoutWaitingAndCarriesFailures) {
  expectEveryRankOk(runJob(2, "callbacks"), 2, "callbacks");
}

TEST(Join, RanksThatShutDownLetTheLastJoinComplete) {
  expectEveryRankOk(runJob(3, "stop-join"), 3, "stop-join");
}

TEST(Fusion, ManySmallTensorsBecomeFewCallsUnderTheThreshold) {
  // A long cycle so that even the one-by-one submissions mostly share cycles.
  const auto result =
      runJob(4, "fusion", {{"HOOP_FUSION_THRESHOLD", "4096"}, {"HOOP_CYCLE_TIME", "20"}});
  expectEveryRankOk(result, 4, "fusion");
}

TEST(Fusion, ThresholdZeroTurnsFusionOff) {
  const auto result = runJob(2, "fusion", {{"HOOP_FUSION_THRESHOLD", "0"}});
  expectEveryRankOk(result, 2, "fusion");
  EXPECT_NE(result.output.find("grouped: 100 calls, 0 fused"), std::string::npos) << result.output;
}

TEST(Errors, RankThatNeverSubmitsIsNamedInAStallError) {
  const auto result = runJob(3, "stall", {{"HOOP_STALL_CHECK_TIME", "2"}});
  expectEveryRankOk(result, 3, "stall");
  // The new name and the cached one both fail on ranks 0 and 2.
  for (const char* rank : {"[0] rank 0 stall error", "[2] rank 2 stall error"}) {
    size_t first = result.output.find(rank);
    ASSERT_NE(first, std::string::npos) << result.output;
    EXPECT_NE(result.output.find(rank, first + 1), std::string::npos) << result.output;
  }
  EXPECT_EQ(result.output.find("rank 1 stall error"), std::string::npos) << result.output;
}

TEST(Errors, MismatchedCountFailsOnEveryRankNamingTheTensor) {
  const auto result = runJob(2, "mismatch");
  expectEveryRankOk(result, 2, "mismatch");
  EXPECT_NE(result.output.find("rank 0 mismatch error"), std::string::npos);
  EXPECT_NE(result.output.find("rank 1 mismatch error"), std::string::npos);
}

TEST(Errors, EnginesWithDifferentFusionThresholdsRefuseToStart) {
  const auto result = runJob(3, "options-mismatch");
  expectEveryRankOk(result, 3, "options-mismatch");
}

TEST(Errors, DeadPeerFailsOutstandingRequestsInsteadOfHanging) {
  const auto result = runJob(2, "dead-peer", {{"HOOP_TIMEOUT", "10"}});
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("rank 0 dead-peer error"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("FAIL"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace hoop::test
