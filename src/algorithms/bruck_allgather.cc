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
  // Slot i ends up holding rank (self + i) mod n's block: rank order is the first `lead` bytes
  // (slots 0 .. n-self-1) moved behind the last `trail` (slots n-self .. n-1). The shorter part
  // waits in staging (taken before the first step, as staging must) while the longer one moves.
  const size_t lead = (n - self) * blockBytes;
  const size_t trail = self * blockBytes;
  char* parked = self != 0 ? prims.staging(std::min(lead, trail)) : nullptr;
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
  // The rotation into rank order, with the executor's copies (so on device memory too): the
  // longer part's move may overlap itself, which copy allows.
  if (parked == nullptr || blockBytes == 0) return;
  if (lead <= trail) {
    prims.copy(parked, output, lead);
    prims.copy(output, output + lead, trail);
    prims.copy(output + trail, parked, lead);
  } else {
    prims.copy(parked, output + lead, trail);
    prims.copy(output + trail, output, lead);
    prims.copy(output, parked, trail);
  }
}

}  // namespace hoop
