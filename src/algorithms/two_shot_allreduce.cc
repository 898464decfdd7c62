// Two-shot allreduce: a direct reduce-scatter, then a direct allgather. Rank r owns piece r of
// the buffer; every rank sends each owner its piece, the owner folds the n copies, and sends the
// result back to everyone. Two dependent steps whatever n is (the ring takes 2(n-1)), moving the
// ring's bytes: each rank sends (n-1)/n of the buffer in each step. Where steps are dear (ranks
// that outnumber cores, a context switch per step; mid-size messages) that is the better trade.
// Large pieces go slice by slice (twoShotSliceBytes: 64 KiB over shm), both steps per slice, so
// what a rank folds and forwards at once stays in its cache and the slices' steps overlap.
//
// Each piece is folded by its owner alone, in a fixed order (the owner's own copy, then the
// following ranks' in ring order), and every rank receives those bits: results are bitwise
// identical on every rank and from run to run.
#include <algorithm>
#include <utility>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/primitives.h"

namespace hoop {

void twoShotAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  comm.connectEveryone();
  const EvenSplit pieces{args.count, n};
  const size_t self = static_cast<size_t>(comm.rank());
  auto peerAt = [&](size_t distance) { return static_cast<int>((self + distance) % n); };
  // Slice j of every piece goes through both steps in round j. Piece 0 is the largest, so it
  // sets the number of rounds, and every rank runs the same rounds (at least one).
  const size_t sliceElements =
      std::min(pieceElementsFor(comm, args), std::max<size_t>(1, pieces.size(0)));
  const size_t rounds = std::max<size_t>(1, (pieces.size(0) + sliceElements - 1) / sliceElements);
  struct Slice {
    size_t offset;  // bytes into the buffer
    size_t bytes;
  };
  auto sliceOf = [&](size_t piece, size_t round) {
    const size_t begin = std::min(pieces.size(piece), round * sliceElements);
    const size_t count = std::min(sliceElements, pieces.size(piece) - begin);
    return Slice{(pieces.offset(piece) + begin) * elementSize, count * elementSize};
  };
  Primitives prims(comm, args, sliceElements * elementSize);

  // Results of the round before, still arriving: (owner, ticket).
  std::vector<std::pair<int, uint64_t>> arriving;
  arriving.reserve(n - 1);
  auto awaitResults = [&] {
    for (const auto& [owner, ticket] : arriving) prims.awaitRecv(owner, ticket);
    arriving.clear();
  };

  for (size_t round = 0; round < rounds; ++round) {
    // Reduce-scatter. Sends go out nearest-behind first, because the owner folds its copies in
    // ring order starting just after itself: the first copy it waits for is the first one sent.
    for (size_t distance = n - 1; distance >= 1; --distance) {
      const size_t owner = static_cast<size_t>(peerAt(distance));
      const Slice slice = sliceOf(owner, round);
      if (slice.bytes > 0) prims.send(static_cast<int>(owner), input + slice.offset, slice.bytes);
    }
    // The last round's results come first: a shm receive is taken in place only with nothing
    // posted ahead of it, and each owner sent them before this round's copies.
    awaitResults();
    const Slice mine = sliceOf(self, round);
    char* result = output + mine.offset;
    if (mine.bytes > 0) {
      // result = x[self+n-1] op (... op (x[self+1] op x[self])); the first step reads the input
      // even when it is the output (in place), element by element before writing it.
      const size_t count = mine.bytes / elementSize;
      const char* folded = input + mine.offset;
      for (size_t distance = 1; distance < n; ++distance) {
        if (distance + 1 < n) {
          prims.recvReduce(peerAt(distance), folded, result, count);
        } else {
          prims.recvReduceCopySend(peerAt(distance), -1, folded, result, count, n);
        }
        folded = result;
      }
    }

    // Allgather. In place, a slice of piece p of the output is the input slice sent to rank p
    // above; p sends its result only after folding every copy of it, so that send has been read
    // by then.
    for (size_t distance = 1; distance < n; ++distance) {
      const int owner = peerAt(distance);
      const Slice slice = sliceOf(static_cast<size_t>(owner), round);
      if (slice.bytes == 0) continue;
      arriving.emplace_back(owner, prims.postRecv(owner, output + slice.offset, slice.bytes));
    }
    if (mine.bytes > 0) {
      for (size_t distance = n - 1; distance >= 1; --distance) {
        prims.send(peerAt(distance), result, mine.bytes);
      }
    }
  }
  awaitResults();
  prims.finish();
}

}  // namespace hoop
