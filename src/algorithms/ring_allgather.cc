// Ring allgather: each rank's block travels once around the ring, forwarded by every rank as it
// arrives, piece by piece so a large block keeps every link busy. Rank r's block lands at
// offset r * count on every rank.

#include "algorithms/collective.h"
#include "algorithms/ring_phases.h"

namespace hoop {

void ringAllGatherBlocks(Primitives& prims, const Ring& ring, FunctionRef<char*(size_t)> blockAt,
                         size_t blockBytes, size_t pieceBytes) {
  const size_t n = ring.size();
  if (n == 1) return;
  const size_t position = ring.position;
  // Always at least one (possibly empty) round, so ranks agree even on zero-byte calls.
  for (size_t offset = 0; offset < blockBytes || offset == 0; offset += pieceBytes) {
    const size_t bytes = std::min(pieceBytes, blockBytes - offset);
    prims.send(ring.next(), blockAt(position) + offset, bytes);
    for (size_t step = 1; step < n - 1; ++step) {
      prims.recvCopySend(ring.prev(), ring.next(), blockAt(ring.behind(step)) + offset, bytes);
    }
    prims.recv(ring.prev(), blockAt(ring.behind(n - 1)) + offset, bytes);
    if (blockBytes == 0) break;
  }
}

void ringAllGather(Team& comm, const CollectiveArgs& args) {
  const size_t blockBytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  const Ring& ring = comm.ring();
  auto blockOf = [&](size_t pos) {
    return output + static_cast<size_t>(ring.at(pos)) * blockBytes;
  };
  executorOf(args).copy(blockOf(ring.position), args.send, blockBytes);
  if (ring.size() == 1) return;
  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args, pieceBytes);
  ringAllGatherBlocks(prims, ring, blockOf, blockBytes, pieceBytes);
  prims.finish();
}

}  // namespace hoop
