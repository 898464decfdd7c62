// hoop's libnccl.so.2 used wrongly, or asked for what hoop does not serve: each call returns the
// right ncclResult_t and ncclGetLastError names the call and says why. Built against hoop's
// nccl.h, linked to hoop's library; one process, communicators of one rank.
#include <gtest/gtest.h>
#include <nccl.h>

#include <climits>
#include <cstring>
#include <string>

namespace {

// A message names the call and gives the reason.
void expectError(ncclResult_t result, ncclResult_t expected, ncclComm_t comm,
                 const std::string& call, const std::string& reason) {
  EXPECT_EQ(result, expected) << ncclGetLastError(comm);
  const std::string message = ncclGetLastError(comm);
  EXPECT_NE(message.find(call), std::string::npos) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
}

class OneRank : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_EQ(ncclCommInitRank(&comm_, 1, id_, 0), ncclSuccess) << ncclGetLastError(nullptr);
  }
  void TearDown() override {
    if (comm_ != nullptr) {
      EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
    }
  }
  ncclUniqueId id_;
  ncclComm_t comm_ = nullptr;
  float data_[4] = {1, 2, 3, 4};
};

TEST_F(OneRank, UnservedCallsAreRefusedWithTheirReason) {
  expectError(ncclCommRevoke(comm_, NCCL_REVOKE_DEFAULT), ncclInvalidUsage, comm_, "ncclCommRevoke",
              "cannot stop a communicator's work and keep");
  expectError(ncclCommRevoke(comm_, 3), ncclInvalidArgument, comm_, "ncclCommRevoke",
              "revokeFlags is 3");
  ncclComm_t shrunk = nullptr;
  expectError(ncclCommShrink(comm_, nullptr, 0, &shrunk, nullptr, NCCL_SHRINK_ABORT),
              ncclInvalidUsage, comm_, "ncclCommShrink", "NCCL_SHRINK_ABORT");
  EXPECT_EQ(shrunk, nullptr);

  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(data_, data_, 4, ncclFloat32, ncclSum, comm_, nullptr), ncclSuccess);
  expectError(ncclGroupSimulateEnd(&sim), ncclInvalidUsage, nullptr, "ncclGroupSimulateEnd",
              "ended without running its 1 call(s)");
  EXPECT_FLOAT_EQ(data_[0], 1.0f) << "a simulated group must not run";
  // The group is over: a new one works.
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(data_, data_, 4, ncclFloat32, ncclSum, comm_, nullptr), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage) << "no group is open";
}

// A process that never used CUDA: no device to name, and no device memory to hand out (this test
// runs without HOOP_DEVICE_EMULATION, on a build with or without CUDA).
TEST_F(OneRank, NoCudaMeansNoDeviceAndNoDeviceMemory) {
  int device = 7;
  expectError(ncclCommCuDevice(comm_, &device), ncclInvalidUsage, comm_, "ncclCommCuDevice",
              "had not used CUDA");
  EXPECT_EQ(device, 7);
  EXPECT_EQ(ncclMemFree(nullptr), ncclSuccess);
  void* memory = nullptr;
  EXPECT_EQ(ncclMemAlloc(&memory, 0), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(memory, nullptr);
}

TEST_F(OneRank, Fp8IsMovedButNotReduced) {
  uint8_t bytes[3] = {1, 2, 3};
  uint8_t out[3] = {};
  expectError(ncclAllReduce(bytes, out, 3, ncclFloat8e4m3, ncclSum, comm_, nullptr),
              ncclInvalidUsage, comm_, "ncclAllReduce",
              "ncclFloat8e4m3 (10): hoop does not reduce");
  expectError(ncclReduceScatter(bytes, out, 3, ncclFloat8e5m2, ncclMax, comm_, nullptr),
              ncclInvalidUsage, comm_, "ncclReduceScatter", "ncclFloat8e5m2 (11)");
  ncclRedOp_t op;
  float scalar = 2;
  expectError(
      ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat8e4m3, ncclScalarHostImmediate, comm_),
      ncclInvalidUsage, comm_, "ncclRedOpCreatePreMulSum", "does not reduce fp8");
  ASSERT_EQ(ncclAllGather(bytes, out, 3, ncclFloat8e5m2, comm_, nullptr), ncclSuccess)
      << ncclGetLastError(comm_);
  EXPECT_EQ(std::memcmp(bytes, out, 3), 0);
  expectError(
      ncclAllReduce(bytes, out, 3, static_cast<ncclDataType_t>(12), ncclSum, comm_, nullptr),
      ncclInvalidArgument, comm_, "ncclAllReduce", "invalid datatype 12");
}

TEST_F(OneRank, BadArgumentsNameTheCallAndLeaveTheCommunicatorUsable) {
  expectError(ncclAllReduce(nullptr, data_, 4, ncclFloat32, ncclSum, comm_, nullptr),
              ncclInvalidArgument, comm_, "ncclAllReduce", "sendbuff is NULL");
  expectError(ncclBroadcast(data_, data_, 4, ncclFloat32, 1, comm_, nullptr), ncclInvalidArgument,
              comm_, "ncclBroadcast", "root 1 is not a rank");
  expectError(ncclGather(data_, data_, 1, ncclFloat32, -1, comm_, nullptr), ncclInvalidArgument,
              comm_, "ncclGather", "root -1");
  expectError(
      ncclAllReduce(data_, data_, 4, ncclFloat32, static_cast<ncclRedOp_t>(-1), comm_, nullptr),
      ncclInvalidArgument, comm_, "ncclAllReduce", "invalid reduction op -1");
  int* nowhere = nullptr;
  expectError(ncclCommCount(comm_, nowhere), ncclInvalidArgument, comm_, "ncclCommCount", "NULL");
  void* handle = nullptr;
  expectError(ncclCommDeregister(comm_, data_), ncclInvalidArgument, comm_, "ncclCommDeregister",
              "not a registration handle");
  ASSERT_EQ(ncclCommRegister(comm_, data_, sizeof(data_), &handle), ncclSuccess);
  EXPECT_EQ(ncclCommDeregister(comm_, handle), ncclSuccess);
  expectError(ncclCommDeregister(comm_, handle), ncclInvalidArgument, comm_, "ncclCommDeregister",
              "deregistered already");
  ncclWindow_t window = nullptr;
  expectError(ncclCommWindowRegister(comm_, data_, sizeof(data_), &window, 8), ncclInvalidArgument,
              comm_, "ncclCommWindowRegister", "winFlags is 8");
  ASSERT_EQ(ncclCommWindowRegister(comm_, data_, sizeof(data_), &window, NCCL_WIN_COLL_SYMMETRIC),
            ncclSuccess);
  EXPECT_EQ(ncclCommWindowDeregister(comm_, window), ncclSuccess);
  // Still usable.
  ASSERT_EQ(ncclAllReduce(data_, data_, 4, ncclFloat32, ncclSum, comm_, nullptr), ncclSuccess)
      << ncclGetLastError(comm_);
  EXPECT_FLOAT_EQ(data_[3], 4.0f);
}

TEST_F(OneRank, ACommunicatorIsGoneAfterAbort) {
  ASSERT_EQ(ncclCommAbort(comm_), ncclSuccess);
  ncclComm_t gone = comm_;
  comm_ = nullptr;
  expectError(ncclAllReduce(data_, data_, 4, ncclFloat32, ncclSum, gone, nullptr), ncclInvalidUsage,
              nullptr, "ncclAllReduce", "not a live communicator");
  int count = 0;
  expectError(ncclCommCount(gone, &count), ncclInvalidUsage, nullptr, "ncclCommCount",
              "destroyed or aborted already");
  expectError(ncclCommDestroy(gone), ncclInvalidUsage, nullptr, "ncclCommDestroy",
              "not a live communicator");
  EXPECT_EQ(ncclCommDestroy(nullptr), ncclSuccess) << "NULL is nothing to destroy, as in NCCL";
}

// The config header: what NCCL_CONFIG_INITIALIZER wrote, or a clear ncclInvalidArgument.
class ConfigHeader : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess); }
  // Expects init with `config` to fail naming `reason`, creating nothing.
  void expectRefused(ncclConfig_t config, const std::string& reason) {
    ncclComm_t comm = reinterpret_cast<ncclComm_t>(this);
    expectError(ncclCommInitRankConfig(&comm, 1, id_, 0, &config), ncclInvalidArgument, nullptr,
                "ncclCommInitRankConfig", reason);
    EXPECT_EQ(comm, nullptr);
  }
  ncclUniqueId id_;
};

TEST_F(ConfigHeader, GarbageIsRefusedNamingTheField) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.magic = 0x12345678;
  expectRefused(config, "config->magic is 0x12345678, not NCCL's 0xcafebeef");
  config = NCCL_CONFIG_INITIALIZER;
  config.size = 4;
  expectRefused(config, "config->size is 4, smaller than the 16-byte header");
  config = NCCL_CONFIG_INITIALIZER;
  config.version = 21399;
  expectRefused(config, "older than NCCL 2.14.0");
  config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 7;
  expectRefused(config, "config->blocking = 7 is neither 0 nor 1");
  config = NCCL_CONFIG_INITIALIZER;
  config.minCTAs = 8;
  config.maxCTAs = 4;
  expectRefused(config, "config->minCTAs = 8 is above config->maxCTAs = 4");
  config = NCCL_CONFIG_INITIALIZER;
  config.CTAPolicy = 9;
  expectRefused(config, "config->CTAPolicy = 9");
}

// NCCL's rule: a field newer than the program's header takes its default, whatever the struct
// holds there. A 2.17 header has no splitShare (2.18) or nvlinkCentricSched (2.28), so values
// that would be refused there are never read; its blocking (2.14) is read and checked.
TEST_F(ConfigHeader, FieldsNewerThanTheProgramsHeaderTakeTheirDefaults) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.version = NCCL_VERSION(2, 17, 0);
  config.splitShare = 42;
  config.nvlinkCentricSched = 42;
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRankConfig(&comm, 1, id_, 0, &config), ncclSuccess)
      << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);

  // The same by size: a struct that ends before splitShare.
  ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess);
  config = NCCL_CONFIG_INITIALIZER;
  config.size = offsetof(ncclConfig_t, splitShare);
  config.splitShare = 42;
  ASSERT_EQ(ncclCommInitRankConfig(&comm, 1, id_, 0, &config), ncclSuccess)
      << ncclGetLastError(nullptr);
  EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);

  ASSERT_EQ(ncclGetUniqueId(&id_), ncclSuccess);
  config = NCCL_CONFIG_INITIALIZER;
  config.version = NCCL_VERSION(2, 17, 0);
  config.blocking = 5;
  expectRefused(config, "config->blocking = 5");
}

TEST(NcclLibrary, VersionAndErrorStrings) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  EXPECT_EQ(ncclGetVersion(nullptr), ncclInvalidArgument);
  for (int code = 0; code < ncclNumResults; ++code) {
    EXPECT_STRNE(ncclGetErrorString(static_cast<ncclResult_t>(code)), "unknown result code");
  }
  EXPECT_STREQ(ncclGetErrorString(static_cast<ncclResult_t>(99)), "unknown result code");
  ncclComm_t comms[2];
  expectError(ncclCommInitAll(comms, 0, nullptr), ncclInvalidArgument, nullptr, "ncclCommInitAll",
              "ndev 0 < 1");
  ncclComm_t comm;
  ncclUniqueId id{};
  expectError(ncclCommInitRankScalable(&comm, 2, 0, 0, &id, nullptr), ncclInvalidArgument, nullptr,
              "ncclCommInitRankScalable", "at least one unique id");
}

}  // namespace
