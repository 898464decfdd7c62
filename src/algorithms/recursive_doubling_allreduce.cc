// Recursive doubling allreduce: in round k every rank trades its whole running result with the
// rank whose index differs in bit k, and both combine the two. After log2(p) rounds every rank
// holds the full reduction. Each round moves the whole buffer, so it sends log2(p) times the
// bytes of the ring's 2(n-1)/n; what it wins is latency: log2(p) steps instead of 2(n-1), which
// is what small messages are made of. Rank counts that are not a power of two fold first
// (power_of_two_fold.h).
//
// Both partners of a round combine the same two values with the lower rank's first, so they
// end every round with the same bits, and so do all ranks at the end.
#include "algorithms/collective.h"
#include "algorithms/power_of_two_fold.h"

namespace hoop {

void recursiveDoublingAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t elementSize = dataTypeSize(args.type);
  foldedAllReduce(comm, args, [&](const FoldedRound& round) {
    const PowerOfTwoFold& fold = round.fold;
    for (size_t bit = 1; bit < fold.survivors(); bit <<= 1) {
      const int partner = fold.rankOf(fold.index() ^ bit);
      for (size_t offset = 0; offset < args.count || offset == 0; offset += round.pieceElements) {
        const size_t piece = std::min(round.pieceElements, args.count - offset);
        char* data = round.result + offset * elementSize;
        round.prims.exchangeCombine(partner, data, piece, data, piece);
        if (args.count == 0) break;
      }
    }
    round.prims.finishAverage(round.result, args.count, static_cast<size_t>(comm.size()));
  });
}

}  // namespace hoop
