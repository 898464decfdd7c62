// Hierarchical allgather for several hosts with the same number of ranks each (two or more of
// both; the dispatcher checks). First each rank trades its block with the ranks of its local
// index on the other hosts, around the cross-host ring; then, within each host, every local index
// hands on the column of blocks it gathered, one host's block after another. Each host sends
// (hosts-1)/hosts of the data across the network, spread over one connection per local index, in
// hosts-1 network steps instead of the flat ring's ranks-1.

#include "algorithms/collective.h"
#include "algorithms/ring_phases.h"
#include "algorithms/team.h"

namespace hoop {

void hierarchicalAllGather(Team& comm, const CollectiveArgs& args) {
  const Ring& local = comm.localRing();
  const Ring& cross = comm.crossRing();
  const size_t blockBytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  auto blockOfRank = [&](int rank) { return output + static_cast<size_t>(rank) * blockBytes; };
  executorOf(args).copy(blockOfRank(comm.rank()), args.send, blockBytes);
  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args, pieceBytes);

  ringAllGatherBlocks(
      prims, cross, [&](size_t host) { return blockOfRank(cross.at(host)); }, blockBytes,
      pieceBytes);
  for (size_t host = 0; host < cross.size(); ++host) {
    ringAllGatherBlocks(
        prims, local, [&](size_t localIndex) { return blockOfRank(comm.rankAt(host, localIndex)); },
        blockBytes, pieceBytes);
  }
  prims.finish();
}

}  // namespace hoop
