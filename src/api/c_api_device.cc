// The C API's device questions for programs that drive CUDA themselves (hoop's NCCL library
// first): where a pointer lives, waiting for a stream, the current device, and device memory.
// Each asks CUDA only where the process already uses it (device/cuda/memory_kind.h says why).
#include "api/c_api_handle.h"
#include "device/cuda/memory_kind.h"
#include "device/device_runtime.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

// The runtime a device question goes to, or nullptr where the process has no device to ask:
// neither the emulation nor a loaded CUDA driver.
DeviceRuntime* runtimeInUse() {
  if (deviceEmulated()) return &deviceRuntime();
  if (!cudaDriverLoaded()) return nullptr;
  return &deviceRuntime();  // throws hoopInvalidUsage in a build without CUDA
}

}  // namespace

HOOP_API hoopResult_t hoopPointerIsDevice(const void* pointer, int* isDevice) {
  return guarded(nullptr, [&] {
    if (isDevice == nullptr) fail(hoopInvalidArgument, "hoopPointerIsDevice: isDevice is NULL");
    const MemoryKind kind =
        deviceEmulated() ? deviceRuntime().kindOf(pointer) : memoryKindOf(pointer);
    *isDevice = kind == MemoryKind::kDevice ? 1 : 0;
  });
}

HOOP_API hoopResult_t hoopStreamSynchronize(hoopStream_t stream) {
  return guarded(nullptr, [&] {
    DeviceRuntime* runtime = nullptr;
    try {
      runtime = runtimeInUse();
    } catch (const Error& e) {
      // A build without CUDA in a process that uses CUDA: hoop cannot reach the legacy stream,
      // and a NULL stream asks nothing more of a call on host memory than to run now.
      if (stream == nullptr) return;
      fail(e.code(), "hoopStreamSynchronize: cannot wait for stream ", stream, ": ", e.what());
    }
    if (runtime == nullptr) {
      if (stream == nullptr) return;
      fail(hoopInvalidUsage, "hoopStreamSynchronize: stream ", stream,
           " cannot be a CUDA stream: this process has not loaded CUDA");
    }
    // The emulation has no legacy default stream: NULL there has nothing enqueued on it.
    if (stream == nullptr && deviceEmulated()) return;
    if (runtime->capturing(stream)) {
      fail(hoopInvalidUsage, "hoopStreamSynchronize: stream ", stream,
           " is being captured into a CUDA graph, so its work cannot be waited for");
    }
    runtime->synchronize(stream);
  });
}

HOOP_API hoopResult_t hoopGetDevice(int* device) {
  return guarded(nullptr, [&] {
    if (device == nullptr) fail(hoopInvalidArgument, "hoopGetDevice: device is NULL");
    *device = -1;
    DeviceRuntime* runtime = nullptr;
    try {
      runtime = runtimeInUse();
    } catch (const Error&) {
      return;  // a build without CUDA has no device to name, and that is no failure
    }
    if (runtime != nullptr) *device = runtime->currentDevice();
  });
}

HOOP_API hoopResult_t hoopMemAlloc(void** pointer, size_t size) {
  return guarded(nullptr, [&] {
    if (pointer == nullptr) fail(hoopInvalidArgument, "hoopMemAlloc: pointer is NULL");
    *pointer = nullptr;
    if (size == 0) return;
    *pointer = deviceRuntime().allocate(size);
  });
}

HOOP_API hoopResult_t hoopMemFree(void* pointer) {
  return guarded(nullptr, [&] {
    if (pointer == nullptr) return;
    DeviceRuntime& runtime = deviceRuntime();
    if (runtime.kindOf(pointer) != MemoryKind::kDevice) {
      fail(hoopInvalidArgument, "hoopMemFree: ", pointer,
           " is not device memory (hoopMemAlloc's memory is)");
    }
    runtime.release(pointer);
  });
}
