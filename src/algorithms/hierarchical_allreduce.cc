// Hierarchical allreduce for several hosts with several ranks each (the same number on every
// host, at least two hosts and two ranks per host; the dispatcher checks): within each host a ring
// reduce-scatter leaves local rank p with chunk p summed over the host; the ranks with local index
// p on every host allreduce that chunk around the cross-host ring; a ring allgather within each
// host spreads the results. Only 2(hosts-1) of the steps cross the network instead of the flat
// ring's 2(ranks-1), and every local index uses its own connections across, so hosts with several
// NICs use them all at once.
//
// Each element is still computed once (on one rank of the cross ring) and copied everywhere, so
// results stay bitwise identical on all ranks.
#include "algorithms/collective.h"
#include "algorithms/ring_phases.h"

namespace hoop {

void hierarchicalAllReduce(Team& comm, const CollectiveArgs& args) {
  const Ring& local = comm.localRing();
  const Ring& cross = comm.crossRing();
  const size_t elementSize = dataTypeSize(args.type);
  const size_t localSize = local.size();
  const size_t pieceElements = pieceElementsFor(comm, args);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  // Loops of localSize * cross.size() pieces, so the cross-host step moves whole pieces. The
  // local steps move whole chunks of cross.size() pieces: a chunk a connection cannot hand over
  // in place is received into the staging piece, which must hold it.
  const size_t chunkElements = cross.size() * pieceElements;
  Primitives prims(comm, args, chunkElements * elementSize);
  const size_t loopElements = localSize * chunkElements;
  for (size_t loopStart = 0; loopStart < args.count; loopStart += loopElements) {
    const RingChunks chunks{EvenSplit{std::min(loopElements, args.count - loopStart), localSize},
                            input + loopStart * elementSize, output + loopStart * elementSize,
                            elementSize};
    const size_t mine = local.position;
    ringReduceScatterPhase(prims, local, chunks, /*divisor=*/1, /*forwardResult=*/false);
    // The host's partial sums of chunk `mine`, combined across hosts; avg divides by all ranks.
    ringAllReduceOver(prims, cross, chunks.out(mine), chunks.out(mine), chunks.count(mine),
                      elementSize, pieceElements, static_cast<size_t>(comm.size()));
    ringAllGatherPhase(prims, local, chunks, /*resultSent=*/false);
  }
  prims.finish();
}

}  // namespace hoop
