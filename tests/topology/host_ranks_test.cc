#include "topology/host_ranks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/error.h"
#include "base/hash.h"

namespace hoop {
namespace {

std::vector<uint64_t> hosts(std::initializer_list<const char*> names) {
  std::vector<uint64_t> ids;
  for (const char* name : names) ids.push_back(fnv1a(name));
  return ids;
}

// Host changes between neighbours around the ring, the wrap-around included.
size_t hostCrossings(const std::vector<uint64_t>& hostIdByRank, const std::vector<int>& ring) {
  size_t crossings = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    crossings += hostIdByRank[ring[i]] != hostIdByRank[ring[(i + 1) % ring.size()]];
  }
  return crossings;
}

TEST(RingOrder, InterleavedHostsBecomeContiguous) {
  EXPECT_EQ(ringOrder(hosts({"b", "a", "b", "a"})), (std::vector<int>{0, 2, 1, 3}));
}

TEST(RingOrder, HostsInOrderOfTheirLowestRank) {
  EXPECT_EQ(ringOrder(hosts({"c", "a", "b", "a", "c", "b"})), (std::vector<int>{0, 4, 1, 3, 2, 5}));
}

TEST(RingOrder, AlreadyGroupedStaysAsIs) {
  EXPECT_EQ(ringOrder(hosts({"a", "a", "b", "b"})), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(ringOrder(hosts({"a", "a", "a"})), (std::vector<int>{0, 1, 2}));
}

TEST(RingOrder, EmptyAndSingle) {
  EXPECT_TRUE(ringOrder({}).empty());
  EXPECT_EQ(ringOrder(hosts({"a"})), (std::vector<int>{0}));
}

// For any assignment: a permutation of the ranks that crosses hosts once per host, the minimum
// for a ring that visits every host.
TEST(RingOrder, PermutationWithFewestCrossings) {
  const char* const kNames[] = {"a", "b", "c", "d"};
  uint32_t state = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    size_t size = 1 + trial % 17;
    std::vector<uint64_t> ids;
    for (size_t r = 0; r < size; ++r) {
      state = state * 1664525u + 1013904223u;
      ids.push_back(fnv1a(kNames[(state >> 16) % 4]));
    }
    std::vector<int> ring = ringOrder(ids);
    std::vector<int> sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    for (size_t r = 0; r < size; ++r) ASSERT_EQ(sorted[r], static_cast<int>(r));
    size_t distinct = std::set<uint64_t>(ids.begin(), ids.end()).size();
    EXPECT_EQ(hostCrossings(ids, ring), distinct == 1 ? 0 : distinct) << "trial " << trial;
  }
}

TEST(LocalRank, CountsSameHostRanksBelow) {
  auto ids = hosts({"b", "a", "b", "a", "b"});
  EXPECT_EQ(localRankOf(ids, 0).rank, 0);
  EXPECT_EQ(localRankOf(ids, 0).size, 3);
  EXPECT_EQ(localRankOf(ids, 1).rank, 0);
  EXPECT_EQ(localRankOf(ids, 1).size, 2);
  EXPECT_EQ(localRankOf(ids, 3).rank, 1);
  EXPECT_EQ(localRankOf(ids, 4).rank, 2);
  EXPECT_EQ(localRankOf(ids, 4).size, 3);
}

TEST(LocalRank, OutOfRangeIsInvalidArgument) {
  auto ids = hosts({"a", "b"});
  for (int rank : {-1, 2}) {
    try {
      localRankOf(ids, rank);
      FAIL() << "rank " << rank << " accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(error.what()).find("out of range for 2 ranks"), std::string::npos)
          << error.what();
    }
  }
}

}  // namespace
}  // namespace hoop
