// The C API's argument checks: each fails with hoopInvalidArgument (or hoopInvalidUsage) naming
// the call and the argument, before anything reaches the communicator.
#pragma once

#include <cstddef>
#include <optional>

#include "api/c_api_handle.h"
#include "device/memory_kind.h"

namespace hoop::capi {

void checkType(hoopDataType_t type, const char* call);
// Where `pointer` points: device memory, or host (and managed) memory, which the CPU reads.
MemoryKind memoryOf(const void* pointer);
void checkOp(hoopRedOp_t op, const char* call);
// `count` elements of `elementSize` bytes, `multiplier` times over (a buffer with a block per
// rank): a size that fits size_t, not NULL unless empty. Returns where it lives (nothing for an
// empty one).
std::optional<MemoryKind> checkBuffer(const void* buffer, size_t count, size_t elementSize,
                                      size_t multiplier, const char* name, const char* call);
// The memory a call's buffers live in, one kind for all: device memory, or host (and managed)
// memory, which the CPU reads. Buffers of both kinds in one call are hoopInvalidUsage naming
// both. A call on host memory blocks and takes no stream (a stream with host buffers is
// hoopInvalidUsage too); one on device memory is enqueued on `stream`, and so is a call with no
// bytes that was given a stream.
class CallMemory {
 public:
  CallMemory(const char* call, hoopStream_t stream) : call_(call), stream_(stream) {}
  void add(const char* name, std::optional<MemoryKind> kind);
  // The kind the call runs on, once every buffer was added; checks the stream against it.
  MemoryKind decide() const;

 private:
  const char* call_;
  hoopStream_t stream_;
  const char* deviceName_ = nullptr;
  const char* hostName_ = nullptr;
};
// A root or peer argument must name a rank of the communicator.
void checkRank(hoopComm* comm, int rank, const char* what, const char* call);

}  // namespace hoop::capi
