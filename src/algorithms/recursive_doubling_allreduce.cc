// Recursive doubling allreduce: in round k every rank trades its whole running result with the
// rank whose index differs in bit k, and both combine the two. After log2(p) rounds every rank
// holds the full reduction. Each round moves the whole buffer, so it sends log2(p) times the
// bytes of the ring's 2(n-1)/n; what it wins is latency: log2(p) steps instead of 2(n-1), which
// is what small messages are made of. Rank counts that are not a power of two fold first
// (power_of_two_fold.h).
//
// Both partners of a round combine the same two values with the lower rank's first, so they
// end every round with the same bits, and so do all ranks at the end.
#include <cstring>

#include "algorithms/collective.h"
#include "algorithms/power_of_two_fold.h"

namespace hoop {

void recursiveDoublingAllReduce(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  auto* result = static_cast<char*>(args.recv);
  if (n == 1) {
    finishAverage(result, args.send, args.count, args.type, args.op, 1);
    return;
  }
  // Count 0 may come with NULL buffers, and memcpy on NULL is undefined even for 0 bytes.
  if (args.send != args.recv && args.bytes() > 0) std::memcpy(result, args.send, args.bytes());
  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args.tag(), args.type, args.op, pieceElements * elementSize);
  const PowerOfTwoFold fold(comm.rank(), comm.size());

  fold.foldIn(prims, result, args.count, elementSize, pieceElements);
  if (!fold.sitsOut()) {
    for (size_t bit = 1; bit < fold.survivors(); bit <<= 1) {
      const int partner = fold.rankOf(fold.index() ^ bit);
      for (size_t offset = 0; offset < args.count || offset == 0; offset += pieceElements) {
        const size_t piece = std::min(pieceElements, args.count - offset);
        char* data = result + offset * elementSize;
        prims.exchangeCombine(partner, data, piece, data, piece);
        if (args.count == 0) break;
      }
    }
    finishAverage(result, result, args.count, args.type, args.op, n);
  }
  fold.foldOut(prims, result, args.count, elementSize, pieceElements);
  prims.finish();
}

}  // namespace hoop
