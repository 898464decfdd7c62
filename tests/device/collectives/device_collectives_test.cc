// Collectives on device memory across real processes, through the C API, checked exactly.
// DeviceEmulated.*: on the CPU emulation of the device (HOOP_DEVICE_EMULATION=1, set for the
// ranks here): the real device executor, device connections and schedules, with streams as
// threads and device memory as shared memory. These are not GPU runs; tools/gpu-check.sh runs the
// same worker on a GPU.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "worker_job.h"

namespace hoop::test {
namespace {

const Env kEmulated = {{"HOOP_DEVICE_EMULATION", "1"}};

class DeviceEmulated : public ::testing::TestWithParam<int> {};

TEST_P(DeviceEmulated, SweepEveryCollectiveDtypeOpAndCount) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "sweep", "--large"}, kEmulated, 600));
}

TEST_P(DeviceEmulated, SendRecvGroups) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "p2p"}, kEmulated));
}

TEST_P(DeviceEmulated, RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "random"}, kEmulated));
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceEmulated, ::testing::Values(1, 2, 3, 4, 8));

// Rank 0's stream waits on peers that will never send; what releases it.
std::vector<ProcessResult> stuckJob(const std::string& how, Env env = kEmulated) {
  return runWithUniqueId(3, {"--suite", how}, env, 60);
}

void expectRankZeroReleased(const std::vector<ProcessResult>& results) {
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, 0) << results[0].output;
  EXPECT_NE(results[0].output.find("OK rank 0"), std::string::npos) << results[0].output;
}

TEST(DeviceEmulatedFailure, AKilledPeerReleasesTheWaitAndIsNamed) {
  const auto results = stuckJob("dead-peer");
  expectRankZeroReleased(results);
  EXPECT_EQ(results[1].status, 128 + SIGKILL) << results[1].output;
}

TEST(DeviceEmulatedFailure, TheTimeOutReleasesTheWaitAndIsNamed) {
  Env env = kEmulated;
  env["HOOP_TIMEOUT"] = "2";
  expectRankZeroReleased(stuckJob("timeout", env));
}

TEST(DeviceEmulatedFailure, AbortReleasesTheWait) { expectRankZeroReleased(stuckJob("abort")); }

}  // namespace
}  // namespace hoop::test
