// Pairwise-exchange alltoall: in step k (1..n-1) every rank sends its block for rank + k and
// receives the block from rank - k, so each step pairs every rank with exactly one sender and
// one receiver and no link carries two transfers at once. Blocks go in pieces, sends posted
// ahead of the matching receive, so large blocks stream and use every socket of a connection.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void pairwiseAllToAll(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t self = static_cast<size_t>(comm.rank());
  const size_t blockBytes = args.bytes();
  const size_t elementSize = dataTypeSize(args.type);
  auto* output = static_cast<char*>(args.recv);
  const auto* input = static_cast<const char*>(args.send);
  Primitives prims(comm, args, 0);
  if (input == output) {
    // In place: the blocks this rank sends would be overwritten by the ones it receives, so
    // send from a copy.
    char* copy = prims.staging(n * blockBytes);
    prims.copy(copy, input, n * blockBytes);
    input = copy;
  } else {
    prims.copy(output + self * blockBytes, input + self * blockBytes, blockBytes);
  }
  if (n == 1) return;

  const size_t pieceBytes = pieceElementsFor(comm, args) * elementSize;
  for (size_t step = 1; step < n; ++step) {
    const size_t to = (self + step) % n;
    const size_t from = (self + n - step) % n;
    comm.connectAll({static_cast<int>(to), static_cast<int>(from)});
    // At least one (possibly empty) message per step, so ranks agree even on zero-byte calls.
    for (size_t offset = 0; offset < blockBytes || offset == 0; offset += pieceBytes) {
      const size_t piece = std::min(pieceBytes, blockBytes - offset);
      prims.send(static_cast<int>(to), input + to * blockBytes + offset, piece);
      prims.recv(static_cast<int>(from), output + from * blockBytes + offset, piece);
      if (blockBytes == 0) break;
    }
  }
  prims.finish();
}

}  // namespace hoop
