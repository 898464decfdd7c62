// Pipelined binary-tree reduce: the broadcast tree (tree_broadcast.cc) run backwards. Ranks,
// counted from the root, form a binary heap; for each piece a rank takes its children's partial
// results as they arrive, adds its own input and passes the sum to its parent, and the root
// finishes the reduction. The root's result is log2(n) hops deep instead of the chain's n-1,
// which wins for small and mid-size messages on many ranks; on large buffers the chain, where
// every rank receives each byte once, is ahead.
//
// The operands meet in a fixed order (the second child's sum onto the rank's own input, then the
// first child's onto that), so a run repeats its bits.
#include "algorithms/binary_heap.h"
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void treeReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const HeapNode node = rootedHeapNode(comm.rank(), comm.size(), args.root);
  comm.connectAll(node.neighbours());

  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args, pieceElements * elementSize,
                   /*scratchPieces=*/4);
  // At least one (possibly empty) piece, so every rank takes part in zero-count calls.
  for (size_t offset = 0; offset < args.count || offset == 0; offset += pieceElements) {
    const size_t count = std::min(pieceElements, args.count - offset);
    const char* in = input + offset * elementSize;
    if (node.children.size() == 2) in = prims.recvReduceScratch(node.children[1], in, count);
    if (node.children.empty()) {
      prims.send(node.parent, in, count * elementSize);
    } else if (node.parent < 0) {
      prims.recvReduceCopySend(node.children[0], -1, in, output + offset * elementSize, count, n);
    } else {
      prims.recvReduceSendScratch(node.children[0], node.parent, in, count);
    }
    if (args.count == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
