// Pipelined binary-tree broadcast: ranks, counted from the root, form a binary heap (v's parent
// is (v-1)/2, its children 2v+1 and 2v+2). The root streams pieces to its two children and every
// rank forwards each piece to its children as soon as it has it. The last rank gets the first
// piece after about log2(n) hops instead of the chain's n-1, which is what wins for small and
// mid-size messages on many ranks; inner ranks send every byte twice, so on large buffers the
// chain's one send per rank is ahead.
#include "algorithms/binary_heap.h"
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void treeBroadcast(Team& comm, const CollectiveArgs& args) {
  const size_t bytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  rootInputToOutput(comm, args);
  if (comm.size() == 1) return;

  const HeapNode node = rootedHeapNode(comm.rank(), comm.size(), args.root);
  comm.connectAll(node.neighbours());

  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args, pieceBytes);
  // At least one (possibly empty) piece, so every rank takes part in zero-byte calls.
  for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
    const size_t piece = std::min(pieceBytes, bytes - offset);
    if (node.parent >= 0) prims.recv(node.parent, output + offset, piece);
    for (int child : node.children) prims.send(child, output + offset, piece);
    if (bytes == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
