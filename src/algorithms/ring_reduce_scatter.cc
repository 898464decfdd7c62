// Ring reduce-scatter: block b of every rank's input is reduced on its way around the ring and
// ends, complete, at the rank that owns it (rank r owns block r). Partial sums travel through
// scratch slots since the output holds only the final block.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void ringReduceScatter(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const size_t blockBytes = args.bytes();
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const Ring& ring = comm.ring();
  const size_t position = ring.position;
  auto block = [&](size_t pos) { return input + static_cast<size_t>(ring.at(pos)) * blockBytes; };
  const int next = ring.next();
  const int prev = ring.prev();
  const size_t pieceElements = pieceElementsFor(comm, args);
  const size_t pieceBytes = pieceElements * elementSize;
  // Enough scratch slots that a rank rarely waits for its own earlier sends to drain.
  Primitives prims(comm, args, pieceBytes, /*scratchPieces=*/4);

  for (size_t offset = 0; offset < args.count || offset == 0; offset += pieceElements) {
    const size_t count = std::min(pieceElements, args.count - offset);
    const size_t byteOffset = offset * elementSize;
    // Start block position-1 on its way; add ours to each block that passes; keep our own.
    prims.send(next, block(position + n - 1) + byteOffset, count * elementSize);
    for (size_t step = 1; step < n - 1; ++step) {
      prims.recvReduceSendScratch(prev, next, block(position + n - 1 - step) + byteOffset, count);
    }
    prims.recvReduceCopySend(prev, -1, block(position) + byteOffset, output + byteOffset, count, n);
    if (args.count == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
