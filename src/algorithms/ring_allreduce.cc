// Ring allreduce: a reduce-scatter followed by an allgather around the ring, so each rank sends
// 2(n-1)/n of the buffer, the bandwidth lower bound. The buffer is processed in loops of n
// pieces; in each loop chunk c is reduced on its way around the ring and ends, complete, at ring
// position c, which then circulates it. Consecutive loops overlap: sends are asynchronous, so a
// rank starts the next loop while its last pieces are still travelling.
//
// Every rank's result for chunk c is the one value computed at position c, so results are
// bitwise identical on all ranks, and the reduction order is fixed, so they repeat run to run.
//
// Intermediate sums live in the output buffer (their final value overwrites them in the
// allgather). That is safe: the final value of a chunk can only come back to this rank after the
// next rank has received every byte this rank sent from that chunk.
#include "algorithms/collective.h"
#include "algorithms/ring_phases.h"

namespace hoop {

void ringReduceScatterPhase(Primitives& prims, const Ring& ring, const RingChunks& chunks,
                            size_t divisor, bool forwardResult) {
  const size_t n = ring.size();
  // Pass our contribution to chunk position-1 along, then n-1 times add ours to what arrives.
  // The last chunk to arrive is chunk `position`, complete.
  size_t c = ring.behind(1);
  prims.send(ring.next(), chunks.in(c), chunks.bytes(c));
  for (size_t step = 1; step < n - 1; ++step) {
    c = ring.behind(step + 1);
    prims.recvReduceSend(ring.prev(), ring.next(), chunks.in(c), chunks.out(c), chunks.count(c));
  }
  c = ring.position;
  prims.recvReduceCopySend(ring.prev(), forwardResult ? ring.next() : -1, chunks.in(c),
                           chunks.out(c), chunks.count(c), divisor);
}

void ringAllGatherPhase(Primitives& prims, const Ring& ring, const RingChunks& chunks,
                        bool resultSent) {
  const size_t n = ring.size();
  if (!resultSent) prims.send(ring.next(), chunks.out(ring.position), chunks.bytes(ring.position));
  // Forward each complete chunk as it arrives; the last one stops here.
  for (size_t step = 1; step < n - 1; ++step) {
    size_t c = ring.behind(step);
    prims.recvCopySend(ring.prev(), ring.next(), chunks.out(c), chunks.bytes(c));
  }
  size_t c = ring.behind(n - 1);
  prims.recv(ring.prev(), chunks.out(c), chunks.bytes(c));
}

void ringAllReduceOver(Primitives& prims, const Ring& ring, const char* input, char* output,
                       size_t count, size_t elementSize, size_t pieceElements, size_t divisor) {
  const size_t n = ring.size();
  for (size_t loopStart = 0; loopStart < count; loopStart += n * pieceElements) {
    const RingChunks chunks{EvenSplit{std::min(n * pieceElements, count - loopStart), n},
                            input + loopStart * elementSize, output + loopStart * elementSize,
                            elementSize};
    ringReduceScatterPhase(prims, ring, chunks, divisor, /*forwardResult=*/true);
    ringAllGatherPhase(prims, ring, chunks, /*resultSent=*/true);
  }
}

void ringAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args, pieceElements * elementSize);
  ringAllReduceOver(prims, comm.ring(), input, output, args.count, elementSize, pieceElements, n);
  prims.finish();
}

}  // namespace hoop
