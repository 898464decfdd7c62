// The binary heap the tree schedules lay over the ranks. Counting places from the heap's root,
// place v's parent is (v-1)/2 and its children are 2v+1 and 2v+2, so n ranks make a tree
// log2(n) levels deep in which every inner rank forwards to at most two.
#pragma once

#include <vector>

namespace hoop {

// This rank's place in one heap, as ranks: its parent (-1 at the root) and its children.
struct HeapNode {
  int parent = -1;
  std::vector<int> children;

  // The parent and the children: the peers a schedule on this heap talks to.
  std::vector<int> neighbours() const;
};

// The heap rooted at `root`, its places following the ranks upwards from there (place v is rank
// (root + v) mod n): the pipelined tree broadcast's and reduce's.
HeapNode rootedHeapNode(int rank, int nranks, int root);

// The heap over the ranks in order, or with `reversed` in reverse order (rank n-1 at the root):
// the double tree allreduce's two trees, in which the leaves of one are the inner ranks of the
// other.
HeapNode orderedHeapNode(int rank, int nranks, bool reversed);

}  // namespace hoop
