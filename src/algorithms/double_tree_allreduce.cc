// Double binary tree allreduce: each half of the buffer is reduced up one binary tree to its
// root and broadcast back down the same tree, piece by piece, so reduction and broadcast of
// different pieces overlap. Tree A is the binary heap over ranks (rank 0 at the root); tree B is
// the same heap over the ranks in reverse (rank n-1 at the root), so the ranks that are leaves
// in A (the upper half) are the inner ranks of B and the other way round: every rank does the
// forwarding work of an inner node for about one half only, and both halves keep all links
// busy. A piece reaches the root and comes back in 2 log2(n) hops instead of the ring's 2(n-1),
// at about twice the ring's bytes per rank, which is what wins at mid sizes on many ranks.
//
// Each piece's result is computed once, at its tree's root, and copied down, so every rank ends
// with the same bits.
#include <utility>
#include <vector>

#include "algorithms/binary_heap.h"
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {
namespace {

// One half of the buffer and the tree that carries it.
struct Half {
  HeapNode node;
  const char* input;
  char* output;
  size_t count;
};

// Piece k of a half up the tree: the children's partial sums plus this rank's input, passed to
// the parent; at the root, the finished piece.
void reduceUp(Primitives& prims, const Half& half, size_t begin, size_t count, size_t elementSize,
              size_t ranks) {
  const HeapNode& node = half.node;
  const char* in = half.input + begin * elementSize;
  char* out = half.output + begin * elementSize;
  if (node.children.empty()) {
    prims.send(node.parent, in, count * elementSize);
    return;
  }
  if (node.children.size() == 2) in = prims.recvReduceScratch(node.children[1], in, count);
  if (node.parent < 0) {
    prims.recvReduceCopySend(node.children[0], -1, in, out, count, ranks);
  } else {
    prims.recvReduceSend(node.children[0], node.parent, in, out, count);
  }
}

// Piece k of a half down the tree: the finished piece from the parent, on to the children.
void broadcastDown(Primitives& prims, const Half& half, size_t begin, size_t count,
                   size_t elementSize) {
  const HeapNode& node = half.node;
  char* out = half.output + begin * elementSize;
  if (node.parent >= 0) prims.recv(node.parent, out, count * elementSize);
  for (int child : node.children) prims.send(child, out, count * elementSize);
}

}  // namespace

void doubleTreeAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const size_t firstHalf = (args.count + 1) / 2;
  const Half halves[2] = {
      {orderedHeapNode(comm.rank(), comm.size(), /*reversed=*/false), input, output, firstHalf},
      {orderedHeapNode(comm.rank(), comm.size(), /*reversed=*/true),
       input + firstHalf * elementSize, output + firstHalf * elementSize, args.count - firstHalf},
  };
  std::vector<int> neighbours = halves[0].node.neighbours();
  for (int peer : halves[1].node.neighbours()) neighbours.push_back(peer);
  comm.connectAll(neighbours);

  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args, pieceElements * elementSize,
                   /*scratchPieces=*/4);
  // A rank is mostly a leaf in one tree and an inner node in the other. Going up, its leaf send
  // goes first: it waits on nothing, and the other tree's reduction needs it. Coming down, the
  // half with children goes first: they wait on it. Taken the other way round, a leaf send
  // would wait for this rank's whole reduction in the other tree (6 hops instead of 4 at 4
  // ranks). Ranks may order the halves differently because no rank is another's child in both
  // heaps (a child of y is 2y+1 or 2y+2 in one, 2y-n or 2y-n-1 in the other): a phase sends at
  // most one message from one rank to another, so the connections' order cannot disagree.
  const Half* up[2] = {&halves[0], &halves[1]};
  if (halves[1].node.children.size() < halves[0].node.children.size()) std::swap(up[0], up[1]);
  const Half* down[2] = {up[1], up[0]};
  auto pieceRange = [&](const Half& half, size_t k) {
    const size_t begin = std::min(half.count, k * pieceElements);
    return std::pair{begin, std::min(pieceElements, half.count - begin)};
  };
  auto reducePiece = [&](size_t k) {
    for (const Half* half : up) {
      const auto [begin, count] = pieceRange(*half, k);
      reduceUp(prims, *half, begin, count, elementSize, n);
    }
  };
  // Both halves advance one piece at a time (an empty piece once a half runs out), and at least
  // one round runs, so every rank makes the same calls in the same order even for zero counts.
  // Piece k+1 goes up before piece k comes down, so reductions and broadcasts overlap: going up
  // waits only on the subtree below, which runs the same order, so nothing waits in a circle.
  const size_t pieces = std::max<size_t>(1, (firstHalf + pieceElements - 1) / pieceElements);
  reducePiece(0);
  for (size_t k = 0; k < pieces; ++k) {
    if (k + 1 < pieces) reducePiece(k + 1);
    for (const Half* half : down) {
      const auto [begin, count] = pieceRange(*half, k);
      broadcastDown(prims, *half, begin, count, elementSize);
    }
  }
  prims.finish();
}

}  // namespace hoop
