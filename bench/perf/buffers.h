// hoop-perf's two host buffers and where a call reads and writes in them, out-of-place and
// in-place (NCCL's in-place rules, which hoop.h follows).
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "collective.h"

namespace hoop::perf {

// Page-aligned host memory, touched once at allocation so no timed iteration pays page faults.
class HostBuffer {
 public:
  explicit HostBuffer(size_t bytes);
  void* data() const { return memory_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* memory) const { std::free(memory); }
  };
  std::unique_ptr<void, Free> memory_;
  size_t bytes_ = 0;
};

// The send and receive buffers, each large enough for the largest row's whole buffer.
struct BufferPair {
  void* send = nullptr;
  void* recv = nullptr;
};

// One call's arguments: what a row runs, on which rank, in which placement.
struct CallSpec {
  Collective collective = Collective::kAllReduce;
  hoopDataType_t type = hoopFloat;
  hoopRedOp_t op = hoopSum;  // used by the reducing collectives only
  int root = 0;              // used by broadcast and reduce only
  size_t count = 0;          // the hoop call's count argument (per rank or peer for the block ones)
  int rank = 0;
  int nranks = 1;
  bool inPlace = false;
};

struct CallBuffers {
  const void* send = nullptr;
  void* recv = nullptr;
};

// Out-of-place: send and recv. In-place, everything lives in recv: allgather sends from its own
// block, recv + rank * count; reducescatter reduces the whole recv and leaves its block at
// recv + rank * count; the others (alltoall too: its blocks trade places) pass recv as both.
CallBuffers callBuffers(const CallSpec& call, const BufferPair& buffers);

}  // namespace hoop::perf
