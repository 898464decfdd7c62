// Collectives on device memory across real processes, through the C API, checked exactly.
// DeviceEmulated.*: on the CPU emulation of the device (HOOP_DEVICE_EMULATION=1, set for the
// ranks here): the real device executor, device connections and schedules, with streams as
// threads and device memory as shared memory. These are not GPU runs; tools/gpu-check.sh runs the
// same worker on a GPU.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hoop::test
