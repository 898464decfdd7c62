// Pipelined binary-tree reduce: the broadcast tree (tree_broadcast.cc) run backwards. Ranks,
// counted from the root, form a binary heap; for each piece a rank takes its children's partial
// results as they arrive, adds its own input and passes the sum to its parent, and the root
// finishes the reduction. The root's result is log2(n) hops deep instead of the chain's n-1,
// which wins for small and mid-size messages on many ranks; on large buffers the chain, where
// every rank receives each byte once, is ahead.
//
// The operands meet in a fixed order (the second child's sum onto the rank's own input, then the
// first child's onto that), so a run repeats its bits.
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void treeReduce(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const size_t root = static_cast<size_t>(args.root);
  const size_t self = (static_cast<size_t>(comm.rank()) + n - root) % n;  // 0 at the root
  auto rankAt = [&](size_t v) { return static_cast<int>((v + root) % n); };
  const int parent = self == 0 ? -1 : rankAt((self - 1) / 2);
  std::vector<int> children;
  for (size_t child : {2 * self + 1, 2 * self + 2}) {
    if (child < n) children.push_back(rankAt(child));
  }
  std::vector<int> neighbours = children;
  if (parent >= 0) neighbours.push_back(parent);
  comm.connectAll(neighbours);

  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args.tag(), args.type, args.op, pieceElements * elementSize,
                   /*scratchPieces=*/4);
  // At least one (possibly empty) piece, so every rank takes part in zero-count calls.
  for (size_t offset = 0; offset < args.count || offset == 0; offset += pieceElements) {
    const size_t count = std::min(pieceElements, args.count - offset);
    const char* in = input + offset * elementSize;
    if (children.size() == 2) in = prims.recvReduceScratch(children[1], in, count);
    if (children.empty()) {
      prims.send(parent, in, count * elementSize);
    } else if (parent < 0) {
      prims.recvReduceCopySend(children[0], -1, in, output + offset * elementSize, count, n);
    } else {
      prims.recvReduceSendScratch(children[0], parent, in, count);
    }
    if (args.count == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
