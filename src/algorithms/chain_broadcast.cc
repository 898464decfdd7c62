// Pipelined chain broadcast: the root streams pieces to the next rank in ring order, and each
// rank forwards every piece as soon as it has it, so the whole chain is busy at once and the
// time approaches bytes / bandwidth + (n-1) * piece latency.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void chainBroadcast(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t bytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  const bool isRoot = comm.rank() == args.root;
  rootInputToOutput(comm, args);
  if (n == 1) return;

  const Ring& ring = comm.ring();
  size_t rootPosition = 0;
  while (ring.at(rootPosition) != args.root) ++rootPosition;
  const size_t hops = (ring.position + n - rootPosition) % n;  // 0 at the root
  const int next = ring.next();
  const int prev = ring.prev();
  const bool isLast = hops == n - 1;
  const size_t elementSize = dataTypeSize(args.type);
  const size_t pieceBytes = pieceElementsFor(comm, args) * elementSize;
  Primitives prims(comm, args, pieceBytes);

  for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
    const size_t piece = std::min(pieceBytes, bytes - offset);
    if (isRoot)
      prims.send(next, output + offset, piece);
    else if (isLast)
      prims.recv(prev, output + offset, piece);
    else
      prims.recvCopySend(prev, next, output + offset, piece);
    if (bytes == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
