// The two halves of a ring allreduce, on one loop's worth of chunks, for schedules that run them
// on different rings (hierarchical) or run them back to back (the ring allreduce itself).
#pragma once

#include "algorithms/primitives.h"
#include "algorithms/ring.h"
#include "base/function_ref.h"

namespace hoop {

// `split.parts == ring.size()` chunks of one loop; chunk c spans elements split.offset(c) ..
// of both the input and the output.
struct RingChunks {
  EvenSplit split;
  const char* input;
  char* output;
  size_t elementSize;

  const char* in(size_t c) const { return input + split.offset(c) * elementSize; }
  char* out(size_t c) const { return output + split.offset(c) * elementSize; }
  size_t count(size_t c) const { return split.size(c); }
  size_t bytes(size_t c) const { return split.size(c) * elementSize; }
};

// Afterwards ring position p holds chunk p reduced over the ring in `output` (divided by
// `divisor` for avg). Partial sums pass through `output` too. With `forwardResult` the finished
// chunk also goes on to the next rank: the first step of a following ring allgather.
void ringReduceScatterPhase(Primitives& prims, const Ring& ring, const RingChunks& chunks,
                            size_t divisor, bool forwardResult);

// Circulates chunk p of `output` from ring position p to every position. `resultSent`: this
// rank's chunk already went out with the reduce-scatter's last step.
void ringAllGatherPhase(Primitives& prims, const Ring& ring, const RingChunks& chunks,
                        bool resultSent);

// A whole ring allreduce of `count` elements over `ring`, pipelined in loops of ring.size()
// pieces. `divisor` is the number of ranks an average divides by.
void ringAllReduceOver(Primitives& prims, const Ring& ring, const char* input, char* output,
                       size_t count, size_t elementSize, size_t pieceElements, size_t divisor);

// A ring allgather of one block per ring position: position p's block, at blockAt(p) on every
// rank, travels around `ring` piece by piece. The caller has put its own block in place.
void ringAllGatherBlocks(Primitives& prims, const Ring& ring, FunctionRef<char*(size_t)> blockAt,
                         size_t blockBytes, size_t pieceBytes);

}  // namespace hoop
