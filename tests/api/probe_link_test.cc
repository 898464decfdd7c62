// hoopCommProbeLink between two ranks as threads: both get the same figures, a byte flipped by
// one sender (HOOP_TEST_FLIP_BYTE) is reported by the receiver with its exact offset, and wrong
// arguments are refused without failing the communicator.
#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <string>

#include "hoop/hoop.h"
#include "scoped_env.h"

namespace {

// Two blocking ranks of one job.
struct RankPair {
  hoopComm_t comms[2] = {};
  RankPair() {
    hoopUniqueId id;
    EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    auto other =
        std::async(std::launch::async, [&] { return hoopCommInitRank(&comms[1], 2, id, 1); });
    EXPECT_EQ(hoopCommInitRank(&comms[0], 2, id, 0), hoopSuccess) << hoopGetLastError(nullptr);
    EXPECT_EQ(other.get(), hoopSuccess);
  }
  ~RankPair() {
    for (hoopComm_t comm : comms) {
      if (comm != nullptr) hoopCommDestroy(comm);
    }
  }
  // Both ranks probe each other at once; each rank's result is in results[rank].
  void probe(size_t bytes, int iters, hoopLinkProbe_t results[2]) {
    auto other = std::async(std::launch::async, [&] {
      return hoopCommProbeLink(comms[1], 0, bytes, iters, &results[1]);
    });
    ASSERT_EQ(hoopCommProbeLink(comms[0], 1, bytes, iters, &results[0]), hoopSuccess)
        << hoopGetLastError(comms[0]);
    ASSERT_EQ(other.get(), hoopSuccess) << hoopGetLastError(comms[1]);
  }
};

void expectIntact(const hoopLinkProbe_t& result) {
  EXPECT_EQ(result.dataOk, 1);
  EXPECT_EQ(result.firstBadMessage, -1);
  EXPECT_EQ(result.firstBadOffset, -1);
}

TEST(ProbeLink, BothRanksReportTheSameFiguresAndIntactData) {
  hoop::test::ScopedEnv noFlip("HOOP_TEST_FLIP_BYTE", std::nullopt);
  RankPair pair;
  hoopLinkProbe_t results[2] = {};
  pair.probe(64 * 1024 + 3, 3, results);  // an odd size: the pattern's last, partial word too
  for (const hoopLinkProbe_t& result : results) {
    expectIntact(result);
    EXPECT_GT(result.sendGBps, 0);
    EXPECT_GT(result.recvGBps, 0);
    EXPECT_GT(result.bidirectionalGBps, 0);
    EXPECT_GT(result.latencyP50Us, 0);
    EXPECT_GE(result.latencyP99Us, result.latencyP50Us);
  }
  // The ranks swap what each timed: one's sending is the other's receiving, to the bit.
  EXPECT_EQ(results[0].sendGBps, results[1].recvGBps);
  EXPECT_EQ(results[0].recvGBps, results[1].sendGBps);
  EXPECT_EQ(results[0].bidirectionalGBps, results[1].bidirectionalGBps);
  EXPECT_EQ(results[0].latencyP50Us, results[1].latencyP50Us);
}

TEST(ProbeLink, AByteFlippedBySenderIsReportedWithItsOffset) {
  constexpr int64_t kOffset = 1000;
  hoop::test::ScopedEnv flip("HOOP_TEST_FLIP_BYTE", "1:" + std::to_string(kOffset));
  RankPair pair;
  hoopLinkProbe_t results[2] = {};
  pair.probe(4096, 2, results);
  // Rank 1 flips byte 1000 of every message it sends; rank 0 receives them.
  EXPECT_EQ(results[0].dataOk, 0);
  EXPECT_EQ(results[0].firstBadMessage, 0);
  EXPECT_EQ(results[0].firstBadOffset, kOffset);
  EXPECT_EQ(results[0].actualByte, static_cast<uint8_t>(results[0].expectedByte ^ 0xff));
  expectIntact(results[1]);
  // A later call derives another pattern; the flip is still found at the same place.
  pair.probe(4096, 2, results);
  EXPECT_EQ(results[0].firstBadOffset, kOffset);
  expectIntact(results[1]);
}

TEST(ProbeLink, WrongArgumentsAreRefusedAndTheCommunicatorStaysUsable) {
  RankPair pair;
  hoopLinkProbe_t result = {};
  auto expectRefused = [&](hoopResult_t status, const char* mentions) {
    EXPECT_EQ(status, hoopInvalidArgument);
    const std::string message = hoopGetLastError(pair.comms[0]);
    EXPECT_NE(message.find(mentions), std::string::npos) << message;
  };
  expectRefused(hoopCommProbeLink(pair.comms[0], 0, 8, 1, &result), "peer 0 is not another rank");
  expectRefused(hoopCommProbeLink(pair.comms[0], 2, 8, 1, &result), "peer 2 is not another rank");
  expectRefused(hoopCommProbeLink(pair.comms[0], 1, 0, 1, &result), "at least one byte");
  expectRefused(hoopCommProbeLink(pair.comms[0], 1, 8, 0, &result), "at least one byte");
  expectRefused(hoopCommProbeLink(pair.comms[0], 1, 8, 1, nullptr), "result is NULL");
  ASSERT_EQ(hoopGroupStart(), hoopSuccess);
  EXPECT_EQ(hoopCommProbeLink(pair.comms[0], 1, 8, 1, &result), hoopInvalidUsage);
  ASSERT_EQ(hoopGroupEnd(), hoopSuccess);
  hoopLinkProbe_t results[2] = {};
  pair.probe(256, 1, results);
  expectIntact(results[0]);
  expectIntact(results[1]);
}

}  // namespace
