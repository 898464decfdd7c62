// Bruck allgather: ceil(log2 n) rounds for any n. Each rank works in its own rotated view, where
// slot i holds the block of rank (self + i) mod n; it starts with its own block in slot 0. In the
// round at distance d every rank sends its first min(d, n - d) slots to rank self - d and
// receives as many from rank self + d into slots d onwards, which are exactly that rank's first
// slots; after the last round every slot is filled, and one local rotation puts the blocks in
// rank order. Against the ring's n-1 steps it needs only ceil(log2 n), for about the same bytes,
// so it wins where per-step latency dominates: small blocks and many ranks.
//
// Allgather only copies, so every rank ends with the same bits as long as every block arrives.
#include <algorithm>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void bruckAllGather(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t self = static_cast<size_t>(comm.rank());
  const size_t blockBytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  // The rotated view lives in the output itself; in place, our block already sits at its rank
  // slot, and slot 0 holds nothing yet.
  auto slot = [&](size_t i) { return output + i * blockBytes; };
  executorOf(args).copy(slot(0), args.send, blockBytes);
  if (n == 1) return;

  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args, pieceBytes);
  // Where the final rotation stages the output (taken before the first step, as staging must).
  char* rotation = self != 0 ? prims.staging(n * blockBytes) : nullptr;
  // Every round sends to one peer and receives from another, so connecting on first use could
  // wait in a cycle around the ranks; set up all of them at once first.
  std::vector<int> peers;
  for (size_t distance = 1; distance < n; distance *= 2) {
    peers.push_back(static_cast<int>((self + n - distance) % n));
    peers.push_back(static_cast<int>((self + distance) % n));
  }
  comm.connectAll(peers);
  for (size_t distance = 1; distance < n; distance *= 2) {
    const int to = static_cast<int>((self + n - distance) % n);
    const int from = static_cast<int>((self + distance) % n);
    const size_t bytes = std::min(distance, n - distance) * blockBytes;
    // At least one (possibly empty) piece, so ranks stay in step on zero-byte calls.
    for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
      const size_t piece = std::min(pieceBytes, bytes - offset);
      prims.sendRecv(to, slot(0) + offset, piece, from, slot(distance) + offset, piece);
      if (bytes == 0) break;
    }
  }
  // Slot i holds rank (self + i) mod n's block: rotate right by self slots into rank order,
  // through staging (the executor's copies, so on device memory too).
  if (rotation == nullptr || blockBytes == 0) return;
  const size_t head = (n - self) * blockBytes;  // slots that move right, to rank order's back
  const size_t tail = self * blockBytes;
  prims.copy(rotation, output, n * blockBytes);
  prims.copy(output, rotation + head, tail);
  prims.copy(output + tail, rotation, head);
}

}  // namespace hoop
