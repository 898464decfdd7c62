// hoopCommSplit, hoopCommFinalize and premultiplied sums in one process: what a communicator of
// one rank shows (settings inherited, a left-out rank, the results), and every misuse, each named.
// tests/api/split_test.cc runs them across processes.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"
#include "hoop/hoop.hpp"

namespace {

// Polls a non-blocking communicator until its queue is done; its final state.
hoopResult_t settle(hoopComm_t comm) {
  hoopResult_t state = hoopInProgress;
  while (state == hoopInProgress) {
    EXPECT_EQ(hoopCommGetAsyncError(comm, &state), hoopSuccess);
    std::this_thread::yield();
  }
  return state;
}

// A communicator of one rank, `blocking` or not, ready for use.
hoopComm_t oneRank(int blocking = 1, const char* algorithms = nullptr) {
  hoopUniqueId id;
  EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.blocking = blocking;
  config.algorithms = algorithms;
  hoopComm_t comm = nullptr;
  const hoopResult_t result = hoopCommInitRankConfig(&comm, 1, id, 0, &config);
  EXPECT_EQ(result, blocking ? hoopSuccess : hoopInProgress) << hoopGetLastError(nullptr);
  if (!blocking) {
    EXPECT_EQ(settle(comm), hoopSuccess) << hoopGetLastError(comm);
  }
  return comm;
}

void expectError(hoopResult_t result, hoopResult_t expected, hoopComm_t comm,
                 const std::string& mentions) {
  EXPECT_EQ(result, expected) << hoopGetLastError(comm);
  EXPECT_NE(std::string(hoopGetLastError(comm)).find(mentions), std::string::npos)
      << "'" << mentions << "' not in: " << hoopGetLastError(comm);
}

std::string scheduleOf(hoopComm_t comm) {
  const char* name = nullptr;
  EXPECT_EQ(hoopCommScheduleName(comm, hoopCollAllReduce, 100, hoopFloat32, &name), hoopSuccess)
      << hoopGetLastError(comm);
  return name != nullptr ? name : "";
}

TEST(Split, ANewCommunicatorInheritsTheParentsSettingsUnlessItsConfigSetsThem) {
  hoopComm_t parent = oneRank(1, "allreduce:=tree");
  hoopComm_t child = nullptr;
  ASSERT_EQ(hoopCommSplit(parent, 3, 0, &child, nullptr), hoopSuccess) << hoopGetLastError(parent);
  ASSERT_NE(child, nullptr);
  int value = -1;
  EXPECT_EQ(hoopCommCount(child, &value), hoopSuccess);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(scheduleOf(child), "tree") << "the parent's algorithms";
  int data[3] = {1, 2, 3};
  EXPECT_EQ(hoopAllReduce(data, data, 3, hoopInt32, hoopSum, child, nullptr), hoopSuccess);
  EXPECT_EQ(data[2], 3);

  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.algorithms = "allreduce:=ring";
  hoopComm_t grandchild = nullptr;
  ASSERT_EQ(hoopCommSplit(child, 0, 0, &grandchild, &config), hoopSuccess)
      << hoopGetLastError(child);
  EXPECT_EQ(scheduleOf(grandchild), "ring") << "the config's field wins";
  EXPECT_EQ(hoopCommDestroy(grandchild), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(child), hoopSuccess);

  hoopComm_t none = parent;
  EXPECT_EQ(hoopCommSplit(parent, HOOP_SPLIT_NOCOLOR, 0, &none, nullptr), hoopSuccess);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(hoopCommDestroy(parent), hoopSuccess);
}

TEST(Split, ANonBlockingParentsSplitIsQueuedAndItsChildIsNonBlocking) {
  hoopComm_t parent = oneRank(0);
  hoopComm_t child = nullptr;
  ASSERT_EQ(hoopCommSplit(parent, 0, 0, &child, nullptr), hoopInProgress)
      << hoopGetLastError(parent);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(settle(parent), hoopSuccess) << hoopGetLastError(parent);
  EXPECT_EQ(settle(child), hoopSuccess) << hoopGetLastError(child);
  int data[2] = {4, 5};
  EXPECT_EQ(hoopAllReduce(data, data, 2, hoopInt32, hoopSum, child, nullptr), hoopInProgress);
  EXPECT_EQ(settle(child), hoopSuccess);
  EXPECT_EQ(data[1], 5);
  // A config asking for a blocking one gets it, once the parent's queue ran the exchange.
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.blocking = 1;
  hoopComm_t blocking = nullptr;
  EXPECT_EQ(hoopCommSplit(parent, 0, 0, &blocking, &config), hoopSuccess)
      << hoopGetLastError(parent);
  EXPECT_EQ(hoopAllReduce(data, data, 2, hoopInt32, hoopSum, blocking, nullptr), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(blocking), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(child), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(parent), hoopSuccess);
}

TEST(Split, WrongArgumentsAreNamedAndLeaveTheParentUsable) {
  hoopComm_t parent = oneRank();
  hoopComm_t child = nullptr;
  expectError(hoopCommSplit(parent, -2, 0, &child, nullptr), hoopInvalidArgument, parent,
              "color -2 is negative and not HOOP_SPLIT_NOCOLOR");
  EXPECT_EQ(child, nullptr);
  expectError(hoopCommSplit(parent, 0, 0, nullptr, nullptr), hoopInvalidArgument, parent,
              "newcomm is NULL");
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.socketStreams = 99;
  expectError(hoopCommSplit(parent, 0, 0, &child, &config), hoopInvalidArgument, parent,
              "hoopCommSplit: config.socketStreams = 99");
  ASSERT_EQ(hoopGroupStart(), hoopSuccess);
  expectError(hoopCommSplit(parent, 0, 0, &child, nullptr), hoopInvalidUsage, parent,
              "not inside hoopGroupStart");
  ASSERT_EQ(hoopGroupEnd(), hoopSuccess);
  EXPECT_EQ(hoopCommSplit(nullptr, 0, 0, &child, nullptr), hoopInvalidArgument);
  ASSERT_EQ(hoopCommSplit(parent, 0, 0, &child, nullptr), hoopSuccess) << hoopGetLastError(parent);
  EXPECT_EQ(hoopCommDestroy(child), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(parent), hoopSuccess);
}

TEST(Finalize, LaterOperationsAreRefusedQueriesDestroyAndAbortAreServed) {
  hoopComm_t comm = oneRank();
  float data[2] = {1, 2};
  ASSERT_EQ(hoopCommFinalize(comm), hoopSuccess) << hoopGetLastError(comm);
  expectError(hoopAllReduce(data, data, 2, hoopFloat32, hoopSum, comm, nullptr), hoopInvalidUsage,
              comm, "hoopAllReduce: rank 0: the communicator was finalized (hoopCommFinalize)");
  expectError(hoopBarrier(comm, nullptr), hoopInvalidUsage, comm, "finalized");
  expectError(hoopSend(data, 1, hoopFloat32, 0, comm, nullptr), hoopInvalidUsage, comm,
              "finalized");
  hoopComm_t child = nullptr;
  expectError(hoopCommSplit(comm, 0, 0, &child, nullptr), hoopInvalidUsage, comm, "finalized");
  hoopRedOp_t op = hoopSum;
  expectError(hoopRedOpCreatePreMulSum(&op, data, hoopFloat32, hoopScalarHostImmediate, comm),
              hoopInvalidUsage, comm, "finalized");
  expectError(hoopCommFinalize(comm), hoopInvalidUsage, comm, "finalized already");
  int count = 0;
  EXPECT_EQ(hoopCommCount(comm, &count), hoopSuccess);
  EXPECT_EQ(count, 1);
  hoopResult_t state = hoopInternalError;
  EXPECT_EQ(hoopCommGetAsyncError(comm, &state), hoopSuccess);
  EXPECT_EQ(state, hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);

  hoopComm_t aborted = oneRank();
  ASSERT_EQ(hoopCommFinalize(aborted), hoopSuccess);
  EXPECT_EQ(hoopCommAbort(aborted), hoopSuccess);
}

TEST(Finalize, ANonBlockingCommunicatorFinishesItsQueueFirst) {
  hoopComm_t comm = oneRank(0);
  int data[2] = {7, 8};
  EXPECT_EQ(hoopAllReduce(data, data, 2, hoopInt32, hoopSum, comm, nullptr), hoopInProgress);
  EXPECT_EQ(hoopCommFinalize(comm), hoopInProgress) << hoopGetLastError(comm);
  EXPECT_EQ(settle(comm), hoopSuccess) << hoopGetLastError(comm);
  EXPECT_EQ(data[1], 8);
  expectError(hoopAllReduce(data, data, 2, hoopInt32, hoopSum, comm, nullptr), hoopInvalidUsage,
              comm, "finalized");
  EXPECT_EQ(hoopCommAbort(comm), hoopSuccess);
}

TEST(PreMulSum, EachReductionMultipliesTheInputFirst) {
  hoopComm_t comm = oneRank();
  double factor = 3;
  hoopRedOp_t byValue = hoopSum;
  ASSERT_EQ(hoopRedOpCreatePreMulSum(&byValue, &factor, hoopFloat64, hoopScalarHostImmediate, comm),
            hoopSuccess)
      << hoopGetLastError(comm);
  EXPECT_GE(static_cast<int>(byValue), static_cast<int>(hoopNumOps));
  factor = 100;  // copied at creation: no effect
  const double input[3] = {1, -2, 4};
  double out[3] = {};
  ASSERT_EQ(hoopAllReduce(input, out, 3, hoopFloat64, byValue, comm, nullptr), hoopSuccess)
      << hoopGetLastError(comm);
  EXPECT_EQ(out[0], 3);
  EXPECT_EQ(out[1], -6);
  EXPECT_EQ(input[1], -2) << "the input is left as it was";

  int64_t scalar = 9;
  hoopRedOp_t byPointer = hoopSum;
  ASSERT_EQ(hoopRedOpCreatePreMulSum(&byPointer, &scalar, hoopInt64, hoopScalarDevice, comm),
            hoopSuccess);
  EXPECT_NE(byPointer, byValue);
  scalar = -5;  // read when the call runs
  int64_t values[2] = {2, 3};
  ASSERT_EQ(hoopReduce(values, values, 2, hoopInt64, byPointer, 0, comm, nullptr), hoopSuccess)
      << hoopGetLastError(comm);
  EXPECT_EQ(values[0], -10);
  EXPECT_EQ(values[1], -15);
  int64_t mine = 0;
  ASSERT_EQ(hoopReduceScatter(values, &mine, 1, hoopInt64, byPointer, comm, nullptr), hoopSuccess);
  EXPECT_EQ(mine, 50);
  EXPECT_EQ(hoopRedOpDestroy(byPointer, comm), hoopSuccess);
  EXPECT_EQ(hoopRedOpDestroy(byValue, comm), hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
}

TEST(PreMulSum, MisusesAreNamed) {
  hoopComm_t comm = oneRank();
  hoopComm_t other = oneRank();
  float factor = 2;
  float data[2] = {1, 2};
  hoopRedOp_t op = hoopSum;
  expectError(hoopRedOpCreatePreMulSum(nullptr, &factor, hoopFloat32, hoopScalarDevice, comm),
              hoopInvalidArgument, comm, "op is NULL");
  expectError(hoopRedOpCreatePreMulSum(&op, nullptr, hoopFloat32, hoopScalarDevice, comm),
              hoopInvalidArgument, comm, "scalar is NULL");
  expectError(hoopRedOpCreatePreMulSum(&op, &factor, hoopFloat32,
                                       static_cast<hoopScalarResidence_t>(7), comm),
              hoopInvalidArgument, comm, "residence 7 is not a hoopScalarResidence_t");
  expectError(hoopRedOpCreatePreMulSum(&op, &factor, static_cast<hoopDataType_t>(42),
                                       hoopScalarDevice, comm),
              hoopInvalidArgument, comm, "invalid datatype 42");

  ASSERT_EQ(hoopRedOpCreatePreMulSum(&op, &factor, hoopFloat32, hoopScalarHostImmediate, comm),
            hoopSuccess);
  expectError(hoopAllReduce(data, data, 2, hoopInt32, op, comm, nullptr), hoopInvalidArgument, comm,
              "was made for float and the call is on int32");
  expectError(hoopAllReduce(data, data, 2, hoopFloat32, op, other, nullptr), hoopInvalidArgument,
              other, "for another communicator");
  expectError(hoopRedOpDestroy(op, other), hoopInvalidArgument, other, "for another communicator");
  expectError(hoopRedOpDestroy(hoopSum, comm), hoopInvalidArgument, comm, "built in");
  ASSERT_EQ(hoopRedOpDestroy(op, comm), hoopSuccess);
  const std::string gone = "nor a live op of hoopRedOpCreatePreMulSum (destroyed, or never made)";
  expectError(hoopAllReduce(data, data, 2, hoopFloat32, op, comm, nullptr), hoopInvalidArgument,
              comm, gone);
  expectError(hoopReduceScatter(data, data, 1, hoopFloat32, op, comm, nullptr), hoopInvalidArgument,
              comm, gone);
  expectError(hoopRedOpDestroy(op, comm), hoopInvalidArgument, comm, gone);
  expectError(hoopAllReduce(data, data, 2, hoopFloat32, static_cast<hoopRedOp_t>(INT_MAX - 1), comm,
                            nullptr),
              hoopInvalidArgument, comm, gone);
  EXPECT_EQ(data[1], 2) << "a refused call leaves the buffers";

  // Destroying a communicator destroys its ops.
  ASSERT_EQ(hoopRedOpCreatePreMulSum(&op, &factor, hoopFloat32, hoopScalarHostImmediate, other),
            hoopSuccess);
  EXPECT_EQ(hoopCommDestroy(other), hoopSuccess);
  expectError(hoopAllReduce(data, data, 2, hoopFloat32, op, comm, nullptr), hoopInvalidArgument,
              comm, gone);
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
}

TEST(CppApi, SplitPreMulSumAndFinalize) {
  hoop::Communicator comm(1, hoop::UniqueId::create(), 0);
  EXPECT_FALSE(comm.split(HOOP_SPLIT_NOCOLOR, 0).has_value());
  std::optional<hoop::Communicator> child = comm.split(0, 0);
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(child->size(), 1);
  {
    hoop::PreMulSum<int32_t> triple(*child, 3);
    int32_t factor = 100;
    hoop::PreMulSum<int32_t> byPointer(*child, &factor);
    factor = -4;
    std::vector<int32_t> data = {1, 2, 3};
    child->allReduce(std::span<int32_t>(data), triple);
    EXPECT_EQ(data[2], 9);
    child->allReduce(std::span<int32_t>(data), byPointer);
    EXPECT_EQ(data[2], -36);
  }
  child->finalize();
  std::vector<int32_t> data = {1};
  try {
    child->allReduce(std::span<int32_t>(data));
    FAIL() << "no exception";
  } catch (const hoop::Exception& e) {
    EXPECT_EQ(e.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("finalized"), std::string::npos) << e.what();
  }
}

}  // namespace
