// Where a buffer lives, which decides the executor that moves and reduces it (executor.h).
// device/cuda/memory_kind.h tells a pointer's kind.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hoop {

enum class MemoryKind : uint8_t {
  kHost,     // ordinary or pinned host memory, or anything CUDA does not know
  kDevice,   // cudaMalloc / cuMemAlloc / cuMemMap memory: not readable by the CPU
  kManaged,  // cudaMallocManaged: readable by both
};
inline constexpr size_t kNumMemoryKinds = 3;

constexpr const char* memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
  }
  return "?";
}

}  // namespace hoop
