// The heaps the tree schedules run on: every rank placed once, parents and children agreeing,
// the root where the schedule expects it, and the double tree's two heaps complementary.
#include "algorithms/binary_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace hoop {
namespace {

using NodeOf = std::function<HeapNode(int rank)>;

// Every rank but `root` is the child of exactly one rank, the one it names as its parent; the
// root has none; no rank is more than floor(log2(n)) levels below the root.
void expectOneTree(int n, int root, const NodeOf& nodeOf) {
  std::vector<int> parentSeen(static_cast<size_t>(n), -1);
  for (int rank = 0; rank < n; ++rank) {
    const HeapNode node = nodeOf(rank);
    EXPECT_LE(node.children.size(), 2u) << "rank " << rank;
    for (int child : node.children) {
      ASSERT_GE(child, 0);
      ASSERT_LT(child, n);
      EXPECT_EQ(parentSeen[static_cast<size_t>(child)], -1)
          << "rank " << child << " has two parents";
      parentSeen[static_cast<size_t>(child)] = rank;
      EXPECT_EQ(nodeOf(child).parent, rank) << "rank " << child << " of " << n;
    }
  }
  int deepest = 0;
  for (int rank = 0; rank < n; ++rank) {
    EXPECT_EQ(nodeOf(rank).parent, parentSeen[static_cast<size_t>(rank)]) << "rank " << rank;
    if (rank == root) {
      EXPECT_EQ(nodeOf(rank).parent, -1);
      continue;
    }
    EXPECT_NE(parentSeen[static_cast<size_t>(rank)], -1)
        << "rank " << rank << " is not in the tree";
    int depth = 0;
    for (int r = rank; r != root && depth <= n; r = nodeOf(r).parent) ++depth;
    deepest = std::max(deepest, depth);
  }
  int levels = 0;
  while ((2 << levels) <= n) ++levels;  // floor(log2(n))
  EXPECT_EQ(deepest, levels) << n << " ranks";
}

TEST(BinaryHeap, RootedHeapIsOneTreeForEveryRoot) {
  for (int n = 1; n <= 17; ++n) {
    for (int root = 0; root < n; ++root) {
      SCOPED_TRACE(testing::Message() << n << " ranks, root " << root);
      expectOneTree(n, root, [&](int rank) { return rootedHeapNode(rank, n, root); });
    }
  }
}

TEST(BinaryHeap, RootedHeapCountsPlacesUpwardsFromTheRoot) {
  // 5 ranks rooted at 3: places 0..4 are ranks 3, 4, 0, 1, 2.
  EXPECT_EQ(rootedHeapNode(3, 5, 3).children, (std::vector<int>{4, 0}));
  EXPECT_EQ(rootedHeapNode(4, 5, 3).children, (std::vector<int>{1, 2}));
  EXPECT_EQ(rootedHeapNode(4, 5, 3).parent, 3);
  EXPECT_TRUE(rootedHeapNode(0, 5, 3).children.empty());
  EXPECT_EQ(rootedHeapNode(2, 5, 3).parent, 4);
  EXPECT_EQ(rootedHeapNode(0, 1, 0).neighbours(), std::vector<int>{});
  EXPECT_EQ(rootedHeapNode(4, 5, 3).neighbours(), (std::vector<int>{1, 2, 3}));
}

TEST(BinaryHeap, OrderedHeapsAreOneTreeEachWithOppositeRoots) {
  for (int n = 1; n <= 17; ++n) {
    SCOPED_TRACE(testing::Message() << n << " ranks");
    expectOneTree(n, 0, [&](int rank) { return orderedHeapNode(rank, n, false); });
    expectOneTree(n, n - 1, [&](int rank) { return orderedHeapNode(rank, n, true); });
  }
  EXPECT_EQ(orderedHeapNode(3, 4, true).children, (std::vector<int>{2, 1}));
  EXPECT_EQ(orderedHeapNode(2, 4, true).children, (std::vector<int>{0}));
  EXPECT_EQ(orderedHeapNode(0, 4, false).children, (std::vector<int>{1, 2}));
}

// The double tree orders its two halves per rank, which is safe only because no rank is another's
// child in both heaps (double_tree_allreduce.cc).
TEST(BinaryHeap, NoRankIsAnothersChildInBothOrderedHeaps) {
  for (int n = 2; n <= 64; ++n) {
    for (int rank = 0; rank < n; ++rank) {
      const std::vector<int> inOrder = orderedHeapNode(rank, n, false).children;
      for (int child : orderedHeapNode(rank, n, true).children) {
        EXPECT_EQ(std::count(inOrder.begin(), inOrder.end(), child), 0)
            << "rank " << child << " is rank " << rank << "'s child in both heaps of " << n;
      }
    }
  }
}

}  // namespace
}  // namespace hoop
