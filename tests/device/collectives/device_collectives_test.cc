// Collectives on device memory across real processes, through the C API, checked exactly.
// DeviceEmulated.*: on the CPU emulation of the device (HOOP_DEVICE_EMULATION=1, set for the
// ranks here): the real device executor, device connections and schedules, with streams as
// threads and device memory as shared memory. These are not GPU runs; tools/gpu-check.sh runs the
// same worker on a GPU.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "worker_job.h"

namespace hoop::test {
namespace {

const Env kEmulated = {{"HOOP_DEVICE_EMULATION", "1"}};

class DeviceEmulated : public ::testing::TestWithParam<int> {};
class DeviceEmulatedSweep : public ::testing::TestWithParam<int> {};

// The million-element count at 2, 3 and 4 ranks; 8 ranks on the CI's two cores take minutes for
// it and exercise no other piece of the path.
TEST_P(DeviceEmulatedSweep, EveryCollectiveDtypeOpAndCount) {
  std::vector<std::string> args = {"--suite", "sweep"};
  if (GetParam() <= 4) args.push_back("--large");
  expectAllPassed(runWithUniqueId(GetParam(), args, kEmulated, 600));
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceEmulatedSweep, ::testing::Values(2, 3, 4, 8));

TEST_P(DeviceEmulated, SendRecvGroups) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "p2p"}, kEmulated));
}

TEST_P(DeviceEmulated, RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "random"}, kEmulated));
}

TEST_P(DeviceEmulated, CollectivesCapturedInAGraphReplayExactly) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "graph"}, kEmulated));
}

INSTANTIATE_TEST_SUITE_P(Ranks, DeviceEmulated, ::testing::Values(1, 2, 3, 4, 8));

// Premultiplied sums on device memory (the scale kernel on the stream, then the sum), every
// datatype and where the factor lives, then hoopCommFinalize waiting for the device.
TEST(DeviceEmulatedPreMulSum, EveryReductionAndDatatypeIsExactAtTwoRanks) {
  expectAllPassed(runWithUniqueId(2, {"--suite", "premulsum"}, kEmulated));
}

// Rank 0's stream waits on peers that will never send; what releases it.
std::vector<ProcessResult> stuckJob(const std::string& how, Env env = kEmulated) {
  return runWithUniqueId(3, {"--suite", how}, env, 60);
}

void expectRankZeroReleased(const std::vector<ProcessResult>& results) {
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].status, 0) << results[0].output;
  EXPECT_NE(results[0].output.find("OK rank 0"), std::string::npos) << results[0].output;
}

// The emulated device memory of a process killed with SIGKILL keeps its names in /dev/shm (a
// GPU's memory goes with the process): removed here, as the emulation exists for tests only.
void removeEmulatedSegmentsOfDeadProcesses() {
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename();
    if (name.rfind("hoopemu-", 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + std::strlen("hoopemu-"));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) std::filesystem::remove(entry.path());
  }
}

TEST(DeviceEmulatedFailure, AKilledPeerReleasesTheWaitAndIsNamed) {
  const auto results = stuckJob("dead-peer");
  removeEmulatedSegmentsOfDeadProcesses();
  expectRankZeroReleased(results);
  EXPECT_EQ(results[1].status, 128 + SIGKILL) << results[1].output;
}

TEST(DeviceEmulatedFailure, TheTimeOutReleasesTheWaitAndIsNamed) {
  Env env = kEmulated;
  env["HOOP_TIMEOUT"] = "2";
  expectRankZeroReleased(stuckJob("timeout", env));
}

TEST(DeviceEmulatedFailure, AbortReleasesTheWait) { expectRankZeroReleased(stuckJob("abort")); }

// Ranks on several simulated hosts (HOOP_HOSTNAME): device messages between hosts are staged
// through host memory over a TCP link of their own, the hierarchical schedules split the work
// by host. The layout names each rank's host.
std::vector<ProcessResult> acrossHosts(const std::string& layout, std::vector<std::string> args,
                                       Env env = kEmulated) {
  std::vector<Env> perRank;
  for (char host : layout) perRank.push_back({{"HOOP_HOSTNAME", std::string("host-") + host}});
  return runWithUniqueId(static_cast<int>(layout.size()), args, env, 300, perRank);
}

class DeviceEmulatedAcrossHosts : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceEmulatedAcrossHosts, EveryCollectiveDtypeOpAndCount) {
  expectAllPassed(acrossHosts(GetParam(), {"--suite", "sweep"}));
}

TEST_P(DeviceEmulatedAcrossHosts, RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank) {
  expectAllPassed(acrossHosts(GetParam(), {"--suite", "random"}));
}

TEST_P(DeviceEmulatedAcrossHosts, SendRecvGroups) {
  expectAllPassed(acrossHosts(GetParam(), {"--suite", "p2p"}));
}

INSTANTIATE_TEST_SUITE_P(Layouts, DeviceEmulatedAcrossHosts,
                         ::testing::Values("ab", "aab", "aabb"));

TEST(DeviceEmulatedFailure, AKilledPeerOnAnotherHostReleasesTheWaitAndIsNamed) {
  const auto results = acrossHosts("abb", {"--suite", "dead-peer"});
  removeEmulatedSegmentsOfDeadProcesses();
  expectRankZeroReleased(results);
  EXPECT_EQ(results[1].status, 128 + SIGKILL) << results[1].output;
}

// Every rank must end the mismatched call with hoopInvalidUsage naming both calls (the worker
// checks), well before the time-out that would otherwise end it.
void expectEveryRankToldOfTheMismatch(const std::string& how, int ranks) {
  Env env = kEmulated;
  env["HOOP_TIMEOUT"] = "30";
  const auto results = runWithUniqueId(ranks, {"--suite", how}, env, 60);
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 0) << results[r].output;
    EXPECT_NE(results[r].output.find("OK rank " + std::to_string(r)), std::string::npos)
        << results[r].output;
  }
}

TEST(DeviceEmulatedFailure, AnotherCollectiveOnOneRankIsNamedOnEveryRank) {
  expectEveryRankToldOfTheMismatch("mismatch-kind", 3);
}

TEST(DeviceEmulatedFailure, AnotherCountOnOneRankIsNamedOnEveryRank) {
  expectEveryRankToldOfTheMismatch("mismatch-count", 4);
}

}  // namespace
}  // namespace hoop::test
