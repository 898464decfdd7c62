// The emulated runtime's memory: allocations, their kind, sharing them with other processes, and
// host memory made "device-addressable".
#include <unistd.h>

#include <cstring>
#include <optional>

#include "base/error.h"
#include "device/emulated/device_segment.h"
#include "device/emulated/emulated_runtime.h"
#include "device/emulated/ipc_handle.h"
#include "device/emulated/segment_registry.h"

namespace hoop::emulated {
namespace {

size_t pageSize() {
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

void* EmulatedRuntime::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  return SegmentRegistry::instance().add(DeviceSegment::create(bytes), SegmentRole::kAllocated);
}

void EmulatedRuntime::release(void* data) noexcept {
  if (data == nullptr) return;
  // The segment (mapping and name) goes when `removed` does, outside the registry's lock. A
  // pointer allocate() did not return is ignored: there is nothing to free, and no one to tell.
  std::optional<DeviceSegment> removed =
      SegmentRegistry::instance().remove(data, SegmentRole::kAllocated);
}

MemoryKind EmulatedRuntime::kindOf(const void* pointer) {
  return SegmentRegistry::instance().contains(pointer) ? MemoryKind::kDevice : MemoryKind::kHost;
}

DeviceIpcHandle EmulatedRuntime::exportMemory(void* data) {
  auto allocation = SegmentRegistry::instance().allocationAt(data);
  if (!allocation) {
    fail(hoopInvalidArgument, "exportMemory: ", data,
         " is not the start of an emulated device allocation");
  }
  return encodeHandle(
      SegmentHandle{allocation->name, allocation->bytes, static_cast<int>(getpid())});
}

void* EmulatedRuntime::importMemory(const DeviceIpcHandle& handle, size_t bytes) {
  SegmentHandle segment = decodeHandle(handle);
  if (segment.exporter == static_cast<int>(getpid())) {
    fail(hoopInvalidUsage, "importMemory: the handle of ", segment.name,
         " was exported by this very process; CUDA refuses to import a process's own memory, so "
         "the emulation does too (use the allocation's own pointer)");
  }
  if (bytes > segment.bytes) {
    fail(hoopInvalidArgument, "importMemory: ", bytes, " bytes asked of ", segment.name,
         ", which was exported with ", segment.bytes);
  }
  return SegmentRegistry::instance().add(DeviceSegment::open(segment.name, segment.bytes),
                                         SegmentRole::kImported);
}

void EmulatedRuntime::closeImported(void* data) noexcept {
  if (data == nullptr) return;
  std::optional<DeviceSegment> removed =
      SegmentRegistry::instance().remove(data, SegmentRole::kImported);
}

void* EmulatedRuntime::mapHost(void* host, size_t bytes) {
  const size_t page = pageSize();
  if (host == nullptr || reinterpret_cast<uintptr_t>(host) % page != 0 || bytes % page != 0) {
    fail(hoopInvalidArgument, "mapHost: ", host, " (", bytes,
         " bytes) is not page-aligned memory of whole pages");
  }
  // The emulated device runs on the CPU: it addresses host memory where it is.
  return host;
}

void EmulatedRuntime::unmapHost(void*) noexcept {}

void EmulatedRuntime::upload(void* device, const void* host, size_t bytes) {
  if (bytes > 0) std::memcpy(device, host, bytes);
}

void EmulatedRuntime::download(void* host, const void* device, size_t bytes) {
  if (bytes > 0) std::memcpy(host, device, bytes);
}

}  // namespace hoop::emulated
