// Hierarchical broadcast for several hosts with the same number of ranks each (two or more of
// both; the dispatcher checks). The ranks with the root's local index form a chain across the
// hosts, starting at the root's host; each of them also starts a chain through its own host. Both
// are pipelined piece by piece, so a piece reaches the last rank after (hosts-1) + (ranks per
// host-1) hops instead of the flat chain's ranks-1, at the same bandwidth.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"
#include "algorithms/team.h"

namespace hoop {

void hierarchicalBroadcast(Team& comm, const CollectiveArgs& args) {
  const Ring& local = comm.localRing();
  const size_t hosts = comm.crossRing().size();
  const size_t perHost = local.size();
  const size_t bytes = args.bytes();
  auto* output = static_cast<char*>(args.recv);
  rootInputToOutput(comm, args);

  size_t rootHost = 0, rootLocal = 0;
  while (comm.rankAt(rootHost, rootLocal) != args.root) {
    if (++rootLocal == perHost) rootLocal = 0, ++rootHost;
  }
  const size_t host = comm.crossRing().position;
  const size_t hostHops = (host + hosts - rootHost) % hosts;  // along the cross-host chain
  const size_t localHops = (local.position + perHost - rootLocal) % perHost;
  const int crossPrev = comm.rankAt((host + hosts - 1) % hosts, rootLocal);
  const int crossNext = comm.rankAt((host + 1) % hosts, rootLocal);

  const size_t pieceBytes = pieceElementsFor(comm, args) * dataTypeSize(args.type);
  Primitives prims(comm, args, pieceBytes);
  for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
    char* piece = output + offset;
    const size_t pieceSize = std::min(pieceBytes, bytes - offset);
    if (localHops == 0) {
      // On the cross-host chain: take the piece from the previous host (unless this is the
      // root), pass it to the next host (unless this is the last) and into this host's chain.
      if (hostHops == 0)
        prims.send(crossNext, piece, pieceSize);
      else if (hostHops < hosts - 1)
        prims.recvCopySend(crossPrev, crossNext, piece, pieceSize);
      else
        prims.recv(crossPrev, piece, pieceSize);
      prims.send(local.next(), piece, pieceSize);
    } else if (localHops < perHost - 1) {
      prims.recvCopySend(local.prev(), local.next(), piece, pieceSize);
    } else {
      prims.recv(local.prev(), piece, pieceSize);
    }
    if (bytes == 0) break;
  }
  prims.finish();
}

}  // namespace hoop
