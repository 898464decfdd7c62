// Ring allgather: each rank's block travels once around the ring, forwarded by every rank as it
// arrives, piece by piece so a large block keeps every link busy. Rank r's block lands at
// offset r * count on every rank.
#include <cstring>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void ringAllGather(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t blockBytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  const Ring& ring = comm.ring();
  auto block = [&](size_t pos) { return output + static_cast<size_t>(ring.at(pos)) * blockBytes; };
  const size_t position = ring.position;
  // Count 0 may come with NULL buffers, and memmove on NULL is undefined even for 0 bytes.
  if (block(position) != args.send && blockBytes > 0) {
    std::memmove(block(position), args.send, blockBytes);
  }
  if (n == 1) return;

  const int next = ring.next();
  const int prev = ring.prev();
  const size_t elementSize = dataTypeSize(args.type);
  const size_t pieceBytes =
      std::max<size_t>(1, comm.config().chunkBytes / elementSize) * elementSize;
  Primitives prims(comm, args.tag(), args.type, args.op, pieceBytes);

  // Always at least one (possibly empty) round, so ranks agree even on zero-byte calls.
  for (size_t offset = 0; offset < blockBytes || offset == 0; offset += pieceBytes) {
    const size_t bytes = std::min(pieceBytes, blockBytes - offset);
    prims.send(next, block(position) + offset, bytes);
    for (size_t step = 1; step < n - 1; ++step) {
      prims.recvCopySend(prev, next, block((position + n - step) % n) + offset, bytes);
    }
    prims.recv(prev, block((position + 1) % n) + offset, bytes);
    if (blockBytes == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
