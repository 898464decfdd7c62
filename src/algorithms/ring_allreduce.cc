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
#include "algorithms/primitives.h"

namespace hoop {

void ringAllReduce(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  const auto* input = static_cast<const char*>(args.send);
  auto* output = static_cast<char*>(args.recv);
  if (n == 1) {
    finishAverage(output, input, args.count, args.type, args.op, 1);
    return;
  }
  const size_t pieceElements = std::max<size_t>(1, comm.config().chunkBytes / elementSize);
  const size_t position = static_cast<size_t>(comm.ringPosition());
  const int next = comm.ring()[(position + 1) % n];
  const int prev = comm.ring()[(position + n - 1) % n];
  Primitives prims(comm, args.tag(), args.type, args.op, pieceElements * elementSize);

  for (size_t loopStart = 0; loopStart < args.count; loopStart += n * pieceElements) {
    const EvenSplit chunks{std::min(n * pieceElements, args.count - loopStart), n};
    auto chunkIndex = [&](size_t stepsBack) { return (position + n - stepsBack % n) % n; };
    auto in = [&](size_t c) { return input + (loopStart + chunks.offset(c)) * elementSize; };
    auto out = [&](size_t c) { return output + (loopStart + chunks.offset(c)) * elementSize; };

    // Reduce-scatter: pass our contribution to chunk position-1 along, then n-1 times add ours
    // to what arrives. The last chunk to arrive is chunk `position`, complete.
    size_t c = chunkIndex(1);
    prims.send(next, in(c), chunks.size(c) * elementSize);
    for (size_t step = 1; step < n - 1; ++step) {
      c = chunkIndex(step + 1);
      prims.recvReduceSend(prev, next, in(c), out(c), chunks.size(c));
    }
    c = chunkIndex(0);
    prims.recvReduceCopySend(prev, next, in(c), out(c), chunks.size(c));

    // Allgather: forward each complete chunk as it arrives; the last one stops here.
    for (size_t step = 1; step < n - 1; ++step) {
      c = chunkIndex(step);
      prims.recvCopySend(prev, next, out(c), chunks.size(c) * elementSize);
    }
    c = chunkIndex(n - 1);
    prims.recv(prev, out(c), chunks.size(c) * elementSize);
  }
  prims.finish();
}

}  // namespace hoop
