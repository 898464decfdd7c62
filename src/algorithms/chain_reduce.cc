// Pipelined chain reduce: the chain starts at the rank after the root and ends at the root;
// each rank adds its input to every piece that passes, and the root finishes the reduction.
// The order of operands is the chain order, the same on every run.
#include <cstring>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void chainReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const bool isRoot = comm.rank() == args.root;
  const Ring& ring = comm.ring();
  size_t rootPosition = 0;
  while (ring.at(rootPosition) != args.root) ++rootPosition;
  const size_t hops = (ring.position + n - rootPosition) % n;  // the chain's first rank has hops 1
  const int next = ring.next();
  const int prev = ring.prev();
  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args, pieceElements * elementSize,
                   /*scratchPieces=*/4);

  for (size_t offset = 0; offset < args.count || offset == 0; offset += pieceElements) {
    const size_t count = std::min(pieceElements, args.count - offset);
    const size_t byteOffset = offset * elementSize;
    if (hops == 1) {
      prims.send(next, input + byteOffset, count * elementSize);
    } else if (isRoot) {
      prims.recvReduceCopySend(prev, -1, input + byteOffset, output + byteOffset, count, n);
    } else {
      prims.recvReduceSendScratch(prev, next, input + byteOffset, count);
    }
    if (args.count == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
