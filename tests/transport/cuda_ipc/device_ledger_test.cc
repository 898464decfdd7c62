// The ledger both sides of a device connection write their messages' tags into
// (transport/cuda_ipc/device_ledger.h): two views of one memory area stand for the two processes.
#include "transport/cuda_ipc/device_ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace hoop {
namespace {

struct Pair {
  std::vector<uint64_t> memory = std::vector<uint64_t>(DeviceLedger::bytes() / 8 + 1, 0);
  DeviceLedger lower{memory.data(), true};
  DeviceLedger higher{memory.data(), false};
};

FrameTag allreduce(uint32_t seq, uint64_t count) {
  return {OpKind::kAllReduce, seq, CallParams{count, 2, 0, 0}};
}

TEST(DeviceLedger, TheSidePostingSecondComparesEitherWay) {
  Pair pair;
  EXPECT_FALSE(pair.lower.recordSend(0, allreduce(1, 10)));
  EXPECT_FALSE(pair.higher.recordRecv(0, allreduce(1, 10)));
  // The receiver posts first this time, and the sender's count differs.
  EXPECT_FALSE(pair.higher.recordRecv(1, allreduce(2, 10)));
  const std::optional<FrameTag> theirs = pair.lower.recordSend(1, allreduce(2, 11));
  ASSERT_TRUE(theirs);
  EXPECT_EQ(theirs->call.count, 10u);
  EXPECT_EQ(theirs->seq, 2u);
}

TEST(DeviceLedger, EveryFieldOfTheTagCounts) {
  Pair pair;
  pair.higher.recordSend(0, allreduce(1, 10));
  FrameTag other = allreduce(1, 10);
  other.kind = OpKind::kAllGather;
  EXPECT_TRUE(pair.lower.recordRecv(0, other));
  pair.higher.recordSend(1, allreduce(2, 10));
  other = allreduce(2, 10);
  other.call.root = 1;
  EXPECT_TRUE(pair.lower.recordRecv(1, other));
  pair.higher.recordSend(2, allreduce(3, 10));
  EXPECT_TRUE(pair.lower.recordRecv(2, allreduce(4, 10)));
}

TEST(DeviceLedger, AnEntryARingAheadIsNotComparedWithTheWrongMessage) {
  Pair pair;
  // The sender ran a whole ring ahead: its entry for message 0 now holds message kLedgerEntries.
  for (uint64_t m = 0; m <= kLedgerEntries; ++m) pair.lower.recordSend(m, allreduce(9, m));
  EXPECT_FALSE(pair.higher.recordRecv(0, allreduce(1, 1)));
  EXPECT_TRUE(pair.higher.recordRecv(1, allreduce(1, 1)));
  EXPECT_EQ(pair.lower.ownSendsPosted(), kLedgerEntries + 1);
  EXPECT_EQ(pair.higher.peerSendsPosted(), kLedgerEntries + 1);
  EXPECT_EQ(pair.higher.ownRecvsPosted(), 2u);
  EXPECT_EQ(pair.lower.peerRecvsPosted(), 2u);
}

TEST(DeviceLedger, AMismatchIsForTheOtherSideToRead) {
  Pair pair;
  EXPECT_FALSE(pair.lower.mismatchFromPeer());
  pair.higher.reportMismatch("allgather #1", "allreduce #1");
  pair.lower.reportMismatch("ignored: the first one stays", "");
  EXPECT_FALSE(pair.higher.mismatchFromPeer());
  const std::optional<LedgerMismatch> found = pair.lower.mismatchFromPeer();
  ASSERT_TRUE(found);
  EXPECT_EQ(found->finderCall, "allgather #1");
  EXPECT_EQ(found->readerCall, "allreduce #1");
}

// Both sides post the same messages at the same time from two threads, with one difference:
// whatever the interleaving, at least one side must see it.
TEST(DeviceLedger, PostingAtOnceNeverMissesADifference) {
  for (int round = 0; round < 200; ++round) {
    Pair pair;
    constexpr uint64_t kMessages = 64;
    const uint64_t differs = static_cast<uint64_t>(round) % kMessages;
    std::atomic<bool> senderSaw{false};
    std::atomic<bool> receiverSaw{false};
    std::thread sender([&] {
      for (uint64_t m = 0; m < kMessages; ++m) {
        if (pair.lower.recordSend(m, allreduce(static_cast<uint32_t>(m), m == differs ? 7 : 8))) {
          senderSaw = true;
        }
      }
    });
    for (uint64_t m = 0; m < kMessages; ++m) {
      if (pair.higher.recordRecv(m, allreduce(static_cast<uint32_t>(m), 8))) receiverSaw = true;
    }
    sender.join();
    ASSERT_TRUE(senderSaw || receiverSaw) << "round " << round;
  }
}

}  // namespace
}  // namespace hoop
