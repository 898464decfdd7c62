#include "algorithms/binary_heap.h"

#include <cstddef>

namespace hoop {
namespace {

// The node at `place` of a heap of n places, where place v is rank rankAt(v).
template <typename RankAt>
HeapNode nodeAt(size_t place, size_t n, RankAt rankAt) {
  HeapNode node;
  if (place > 0) node.parent = rankAt((place - 1) / 2);
  for (size_t child : {2 * place + 1, 2 * place + 2}) {
    if (child < n) node.children.push_back(rankAt(child));
  }
  return node;
}

}  // namespace

std::vector<int> HeapNode::neighbours() const {
  std::vector<int> peers = children;
  if (parent >= 0) peers.push_back(parent);
  return peers;
}

HeapNode rootedHeapNode(int rank, int nranks, int root) {
  const auto n = static_cast<size_t>(nranks);
  const auto first = static_cast<size_t>(root);
  const size_t place = (static_cast<size_t>(rank) + n - first) % n;
  return nodeAt(place, n, [&](size_t v) { return static_cast<int>((v + first) % n); });
}

HeapNode orderedHeapNode(int rank, int nranks, bool reversed) {
  const auto n = static_cast<size_t>(nranks);
  auto mirror = [&](size_t v) { return reversed ? n - 1 - v : v; };
  return nodeAt(mirror(static_cast<size_t>(rank)), n,
                [&](size_t v) { return static_cast<int>(mirror(v)); });
}

}  // namespace hoop
