#include "api/c_api_arguments.h"

#include <cstdint>

#include "device/cuda/memory_kind.h"
#include "device/device_runtime.h"

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

MemoryKind memoryOf(const void* pointer) {
  // The emulated device's memory is known to its runtime alone; CUDA's to the driver, asked only
  // where it is loaded (memory_kind.h).
  const MemoryKind kind =
      deviceEmulated() ? deviceRuntime().kindOf(pointer) : memoryKindOf(pointer);
  // Managed memory is read by the CPU, as host memory.
  return kind == MemoryKind::kDevice ? MemoryKind::kDevice : MemoryKind::kHost;
}

std::optional<MemoryKind> checkBuffer(const void* buffer, size_t count, size_t elementSize,
                                      size_t multiplier, const char* name, const char* call) {
  if (count > SIZE_MAX / elementSize / multiplier) {
    fail(hoopInvalidArgument, call, ": count ", count, " overflows the byte size");
  }
  if (buffer == nullptr && count > 0) fail(hoopInvalidArgument, call, ": ", name, " is NULL");
  if (count == 0) return std::nullopt;
  return memoryOf(buffer);
}

void CallMemory::add(const char* name, std::optional<MemoryKind> kind) {
  if (!kind) return;
  if (*kind == MemoryKind::kDevice) {
    if (deviceName_ == nullptr) deviceName_ = name;
  } else if (hostName_ == nullptr) {
    hostName_ = name;
  }
}

MemoryKind CallMemory::decide() const {
  if (deviceName_ != nullptr && hostName_ != nullptr) {
    fail(hoopInvalidUsage, call_, ": ", deviceName_, " is device memory but ", hostName_,
         " is host memory; a call's buffers must all be device memory or all host memory");
  }
  if (deviceName_ != nullptr) return MemoryKind::kDevice;
  if (hostName_ == nullptr && stream_ != nullptr) return MemoryKind::kDevice;
  if (stream_ != nullptr) {
    fail(hoopInvalidUsage, call_,
         ": a stream was given with host buffers; calls on host memory block until done and "
         "take NULL (pass device buffers to enqueue on a stream)");
  }
  return MemoryKind::kHost;
}

void checkRank(hoopComm* comm, int rank, const char* what, const char* call) {
  if (rank < 0 || rank >= comm->impl->size()) {
    fail(hoopInvalidArgument, call, ": ", what, " ", rank, " is not a rank of this communicator (",
         comm->impl->size(), " ranks)");
  }
}

}  // namespace hoop::capi
