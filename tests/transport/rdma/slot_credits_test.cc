// The accounting of an RDMA slot ring: immediates, counters past their 28 bits, the sender's
// room, arrivals out of order across queue pairs, garbage refused, and when credits go back.
#include "transport/rdma/slot_credits.h"

#include <gtest/gtest.h>

#include "transport/rdma/rdma_layout.h"

namespace hoop {
namespace {

TEST(SlotImmediates, PackAndUnpack) {
  const uint32_t imm = packImm(ImmKind::kCredit, 12345);
  const auto back = unpackImm(imm);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->kind, ImmKind::kCredit);
  EXPECT_EQ(back->value, 12345u);
  // Only the low 28 bits of a value travel.
  EXPECT_EQ(unpackImm(packImm(ImmKind::kSlot, (uint64_t{1} << 28) + 5))->value, 5u);
  EXPECT_FALSE(unpackImm(0).has_value());
  EXPECT_FALSE(unpackImm(0xf0000000).has_value());
}

TEST(SlotImmediates, CountersWidenPastTheWrap) {
  const uint64_t base = (uint64_t{3} << 28) - 2;  // two before a wrap of the 28 bits
  EXPECT_EQ(widenCounter(static_cast<uint32_t>(base) & kImmValueMask, base), base);
  EXPECT_EQ(widenCounter(static_cast<uint32_t>(base + 5) & kImmValueMask, base), base + 5);
  EXPECT_EQ(widenCounter(1, 0), 1u);
}

TEST(OutboundSlots, RoomFollowsCredits) {
  OutboundSlots out(4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(out.hasRoom());
    EXPECT_EQ(out.next(), static_cast<uint64_t>(i));
    out.publish();
  }
  EXPECT_FALSE(out.hasRoom());
  EXPECT_TRUE(out.credit(1));
  EXPECT_TRUE(out.hasRoom());
  out.publish();
  EXPECT_FALSE(out.hasRoom());
  EXPECT_TRUE(out.credit(1));  // says nothing new: fine
  EXPECT_FALSE(out.hasRoom());
  EXPECT_FALSE(out.credit(6));  // more than were written: garbage
  EXPECT_TRUE(out.credit(5));
  EXPECT_EQ(out.released(), 5u);
}

TEST(SlotCounters, KeepWorkingPastTheWrapOfTheImmediates) {
  // A long job: both sides' counts a few positions before 2^28, exchanging through the wrap.
  const uint64_t start = (uint64_t{1} << 28) - 5;
  OutboundSlots out(8, start);
  InboundSlots in(8, start);
  for (int round = 0; round < 4; ++round) {
    while (out.hasRoom()) {
      ASSERT_TRUE(in.arrive(packImm(ImmKind::kSlot, out.next()) & kImmValueMask));
      out.publish();
    }
    while (in.headArrived()) in.release();
    ASSERT_TRUE(in.creditDue());
    ASSERT_TRUE(out.credit(static_cast<uint32_t>(in.takeCredit()) & kImmValueMask));
  }
  EXPECT_EQ(out.released(), start + 32);
  EXPECT_EQ(in.head(), start + 32);
}

TEST(InboundSlots, ArrivalsOutOfOrderAreConsumedInOrder) {
  InboundSlots in(4);
  EXPECT_FALSE(in.headArrived());
  EXPECT_TRUE(in.arrive(2));
  EXPECT_TRUE(in.arrive(1));
  EXPECT_FALSE(in.headArrived());
  EXPECT_TRUE(in.arrive(0));
  for (uint64_t position = 0; position < 3; ++position) {
    ASSERT_TRUE(in.headArrived());
    EXPECT_EQ(in.head(), position);
    in.release();
  }
  EXPECT_FALSE(in.headArrived());
}

TEST(InboundSlots, GarbageArrivalsAreRefused) {
  InboundSlots in(4);
  EXPECT_FALSE(in.arrive(4));  // beyond the ring
  EXPECT_TRUE(in.arrive(0));
  EXPECT_FALSE(in.arrive(0));  // twice
  in.release();
  EXPECT_FALSE(in.arrive(0));  // already consumed: a stale position reads as far ahead
  EXPECT_TRUE(in.arrive(4));   // the slot of 0, written again
}

TEST(InboundSlots, CreditsGoInBatchesOrWhenNothingWaits) {
  InboundSlots in(8);  // batch of 2
  for (uint32_t p = 0; p < 8; ++p) ASSERT_TRUE(in.arrive(p));
  EXPECT_FALSE(in.creditDue());
  in.release();
  EXPECT_FALSE(in.creditDue());  // one released, more arrived: wait for the batch
  in.release();
  EXPECT_TRUE(in.creditDue());
  EXPECT_EQ(in.takeCredit(), 2u);
  EXPECT_FALSE(in.creditDue());
  for (int i = 0; i < 5; ++i) in.release();
  EXPECT_TRUE(in.creditDue());
  EXPECT_EQ(in.takeCredit(), 7u);
  in.release();  // the last one: nothing else arrived, so the sender may be waiting
  EXPECT_TRUE(in.creditDue());
  EXPECT_EQ(in.takeCredit(), 8u);
}

TEST(RdmaLayout, RegionsDoNotOverlap) {
  const RdmaLayout layout(8, 4096);
  EXPECT_EQ(layout.inboundSlot(0), 0u);
  EXPECT_EQ(layout.inboundSlot(9), layout.slotStride());
  EXPECT_EQ(layout.outboundSlot(0), 8 * layout.slotStride());
  EXPECT_GE(layout.inboundCts(0), layout.outboundSlot(7) + layout.slotStride());
  EXPECT_GE(layout.outboundCts(0), layout.inboundCts(RdmaLayout::kCtsEntries - 1) + 64);
  EXPECT_GE(layout.probeTarget(), layout.outboundCts(RdmaLayout::kCtsEntries - 1) + 64);
  EXPECT_LE(layout.probeSource() + 64, layout.totalBytes());
  EXPECT_EQ(layout.totalBytes() % 4096, 0u);
  EXPECT_EQ((layout.inboundSlot(3) + RdmaLayout::kHeaderBytes) % 64, 0u);
}

}  // namespace
}  // namespace hoop
