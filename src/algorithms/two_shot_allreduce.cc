// Two-shot allreduce: a direct reduce-scatter, then a direct allgather. Rank r owns piece r of
// the buffer; every rank sends each owner its piece, the owner folds the n copies, and sends the
// result back to everyone. Two dependent steps whatever n is (the ring takes 2(n-1)), moving the
// ring's bytes: each rank sends (n-1)/n of the buffer in each step. Where steps are dear (ranks
// that outnumber cores, a context switch per step; mid-size messages) that is the better trade.
//
// Each piece is folded by its owner alone, in a fixed order (the owner's own copy, then the
// following ranks' in ring order), and every rank receives those bits: results are bitwise
// identical on every rank and from run to run.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void twoShotAllReduce(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  comm.connectEveryone();
  const EvenSplit pieces{args.count, n};
  const size_t self = static_cast<size_t>(comm.rank());
  auto offset = [&](size_t piece) { return pieces.offset(piece) * elementSize; };
  auto peerAt = [&](size_t distance) { return static_cast<int>((self + distance) % n); };
  Primitives prims(comm, args.tag(), args.type, args.op, pieces.size(0) * elementSize);

  // Reduce-scatter. Sends go out nearest-behind first, because the owner folds its copies in
  // ring order starting just after itself: the first copy it waits for is the first one sent.
  for (size_t distance = n - 1; distance >= 1; --distance) {
    const size_t owner = static_cast<size_t>(peerAt(distance));
    if (pieces.size(owner) > 0) {
      prims.send(static_cast<int>(owner), input + offset(owner), pieces.size(owner) * elementSize);
    }
  }
  const size_t mine = pieces.size(self);
  char* result = output + offset(self);
  if (mine > 0) {
    // result = x[self+n-1] op (... op (x[self+1] op x[self])); the first step reads the input
    // even when it is the output (in place), element by element before writing it.
    const char* folded = input + offset(self);
    for (size_t distance = 1; distance < n; ++distance) {
      if (distance + 1 < n) {
        prims.recvReduce(peerAt(distance), folded, result, mine);
      } else {
        prims.recvReduceCopySend(peerAt(distance), -1, folded, result, mine, n);
      }
      folded = result;
    }
  }

  // Allgather. In place, piece p of the output is the input piece sent to rank p above; p sends
  // its result only after folding every copy of piece p, so that send has been read by then.
  std::vector<std::pair<int, uint64_t>> awaited;
  awaited.reserve(n - 1);
  for (size_t distance = 1; distance < n; ++distance) {
    const int owner = peerAt(distance);
    const size_t size = pieces.size(static_cast<size_t>(owner));
    if (size == 0) continue;
    Connection& c = comm.connection(owner);
    awaited.emplace_back(owner, c.postRecv(output + offset(static_cast<size_t>(owner)),
                                           size * elementSize, args.tag()));
  }
  if (mine > 0) {
    for (size_t distance = n - 1; distance >= 1; --distance) {
      prims.send(peerAt(distance), result, mine * elementSize);
    }
  }
  for (const auto& [owner, ticket] : awaited) {
    Connection& c = comm.connection(owner);
    comm.waitUntil([&, ticket = ticket] { return c.recvsCompleted() > ticket; },
                   [&, owner = owner] { return str("data from ", comm.peer(owner).describe()); });
  }
  prims.finish();
}

}  // namespace hoop
