#include "collective.h"

#include <gtest/gtest.h>

namespace hoop::perf {
namespace {

TEST(Collective, NamesRoundTrip) {
  for (Collective coll : kAllCollectives) {
    EXPECT_EQ(parseCollectiveName(collectiveName(coll)), coll);
  }
  EXPECT_EQ(parseCollectiveName("alltoall"), Collective::kAllToAll);
  EXPECT_FALSE(parseCollectiveName("alltoallv").has_value());
  EXPECT_FALSE(parseCollectiveName("AllReduce").has_value());
  // The names nccl-tests' binaries go by, from the project's one table of operation kinds.
  const char* const names[] = {"allreduce",     "allgather", "broadcast", "reduce",
                               "reducescatter", "sendrecv",  "alltoall"};
  ASSERT_EQ(std::size(kAllCollectives), std::size(names));
  for (size_t i = 0; i < std::size(names); ++i)
    EXPECT_EQ(collectiveName(kAllCollectives[i]), names[i]);
  // Operation kinds hoop-perf does not measure.
  EXPECT_FALSE(parseCollectiveName("barrier").has_value());
  EXPECT_FALSE(parseCollectiveName("setup").has_value());
}

TEST(Collective, OpAndRoot) {
  EXPECT_TRUE(collectiveReduces(Collective::kAllReduce));
  EXPECT_TRUE(collectiveReduces(Collective::kReduce));
  EXPECT_TRUE(collectiveReduces(Collective::kReduceScatter));
  EXPECT_FALSE(collectiveReduces(Collective::kAllGather));
  EXPECT_FALSE(collectiveReduces(Collective::kBroadcast));
  EXPECT_FALSE(collectiveReduces(Collective::kSendRecv));
  EXPECT_FALSE(collectiveReduces(Collective::kAllToAll));
  EXPECT_FALSE(collectiveHasRoot(Collective::kAllToAll));
  EXPECT_TRUE(collectiveHasRoot(Collective::kBroadcast));
  EXPECT_TRUE(collectiveHasRoot(Collective::kReduce));
  EXPECT_FALSE(collectiveHasRoot(Collective::kAllReduce));
  EXPECT_FALSE(collectiveHasRoot(Collective::kSendRecv));
}

TEST(BusBwFactor, AllReduceIsTwoNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::kAllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::kAllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busBwFactor(Collective::kAllReduce, 3), 4.0 / 3.0);
}

TEST(BusBwFactor, GatherAndScatterAreNMinusOneOverN) {
  for (Collective coll :
       {Collective::kAllGather, Collective::kReduceScatter, Collective::kAllToAll}) {
    EXPECT_DOUBLE_EQ(busBwFactor(coll, 1), 0.0);
    EXPECT_DOUBLE_EQ(busBwFactor(coll, 2), 0.5);
    EXPECT_DOUBLE_EQ(busBwFactor(coll, 4), 0.75);
    EXPECT_DOUBLE_EQ(busBwFactor(coll, 8), 0.875);
  }
}

TEST(BusBwFactor, RootedAndPointToPointAreOne) {
  for (Collective coll : {Collective::kBroadcast, Collective::kReduce, Collective::kSendRecv}) {
    for (int n : {1, 2, 3, 8, 64}) EXPECT_DOUBLE_EQ(busBwFactor(coll, n), 1.0);
  }
}

TEST(RowCounts, WholeBufferCollectives) {
  for (Collective coll : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,
                          Collective::kSendRecv}) {
    const RowCounts row = rowCounts(coll, 1024, 4, 4);
    EXPECT_EQ(row.count, 256u);
    EXPECT_EQ(row.bytes, 1024u);
  }
  // A size that is not a multiple of the type drops the remainder.
  const RowCounts odd = rowCounts(Collective::kAllReduce, 10, 4, 2);
  EXPECT_EQ(odd.count, 2u);
  EXPECT_EQ(odd.bytes, 8u);
}

TEST(RowCounts, GatherAndScatterCountPerRankAndShowTheWholeBuffer) {
  for (Collective coll : {Collective::kAllGather, Collective::kReduceScatter}) {
    const RowCounts row = rowCounts(coll, 1024, 4, 4);
    EXPECT_EQ(row.count, 64u);
    EXPECT_EQ(row.bytes, 1024u);
    // 3 ranks: 256 floats make 85 per rank, 1020 bytes in all.
    const RowCounts three = rowCounts(coll, 1024, 4, 3);
    EXPECT_EQ(three.count, 85u);
    EXPECT_EQ(three.bytes, 1020u);
    // Fewer elements than ranks: an empty row, as nccl-tests prints it.
    const RowCounts tiny = rowCounts(coll, 8, 4, 4);
    EXPECT_EQ(tiny.count, 0u);
    EXPECT_EQ(tiny.bytes, 0u);
  }
}

// nccl-tests' alltoall: the size is the whole send buffer, the count is per peer.
TEST(RowCounts, AllToAllCountsPerPeerAndShowsTheWholeBuffer) {
  const RowCounts row = rowCounts(Collective::kAllToAll, 1024, 4, 4);
  EXPECT_EQ(row.count, 64u);
  EXPECT_EQ(row.bytes, 1024u);
  // 3 ranks of halves: 512 elements make 170 per peer, 1020 bytes in all.
  const RowCounts three = rowCounts(Collective::kAllToAll, 1024, 2, 3);
  EXPECT_EQ(three.count, 170u);
  EXPECT_EQ(three.bytes, 1020u);
  const RowCounts tiny = rowCounts(Collective::kAllToAll, 8, 8, 2);
  EXPECT_EQ(tiny.count, 0u);
  EXPECT_EQ(tiny.bytes, 0u);
  const RowCounts one = rowCounts(Collective::kAllToAll, 64, 1, 1);
  EXPECT_EQ(one.count, 64u);
  EXPECT_EQ(one.bytes, 64u);
}

TEST(RowCounts, LargeSizesDoNotOverflow) {
  const size_t size = size_t{3} << 40;  // 3 TiB: past any 32-bit count
  const RowCounts row = rowCounts(Collective::kAllGather, size, 8, 2);
  EXPECT_EQ(row.count, size / 16);
  EXPECT_EQ(row.bytes, size);
}

}  // namespace
}  // namespace hoop::perf
