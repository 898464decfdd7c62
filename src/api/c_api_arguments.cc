#include "api/c_api_arguments.h"

#include <cstdint>

#include "device/cuda/memory_kind.h"

namespace hoop::capi {

void checkType(hoopDataType_t type, const char* call) {
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= hoopNumTypes) {
    fail(hoopInvalidArgument, call, ": invalid datatype ", static_cast<int>(type));
  }
}

void checkOp(hoopRedOp_t op, const char* call) {
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= hoopNumOps) {
    fail(hoopInvalidArgument, call, ": invalid reduction op ", static_cast<int>(op));
  }
}

void checkBuffer(const void* buffer, size_t count, size_t elementSize, size_t multiplier,
                 const char* name, const char* call) {
  if (count > SIZE_MAX / elementSize / multiplier) {
    fail(hoopInvalidArgument, call, ": count ", count, " overflows the byte size");
  }
  if (buffer == nullptr && count > 0) fail(hoopInvalidArgument, call, ": ", name, " is NULL");
  // The collectives read buffers with the CPU: a device pointer would crash the process.
  if (count > 0 && memoryKindOf(buffer) == MemoryKind::kDevice) {
    fail(hoopInvalidUsage, call, ": ", name, " ", buffer,
         " is CUDA device memory, and collectives on device buffers are not supported yet by "
         "this build path; pass host (or managed) memory");
  }
}

void checkRank(hoopComm* comm, int rank, const char* what, const char* call) {
  if (rank < 0 || rank >= comm->impl->size()) {
    fail(hoopInvalidArgument, call, ": ", what, " ", rank, " is not a rank of this communicator (",
         comm->impl->size(), " ranks)");
  }
}

void checkStream(hoopStream_t stream, const char* call) {
  if (stream != nullptr) {
    fail(hoopInvalidUsage, call,
         ": a stream was given, but this hoop has no CUDA support; pass "
         "NULL for host memory");
  }
}

}  // namespace hoop::capi
