// DeviceRuntime on CUDA (cuda_runtime.h). The runtime API does everything except the flags, which
// use the driver's stream memory operations: the driver is not linked (the static runtime loads
// it), so those entry points are looked up once through the runtime.
#include "device/cuda/cuda_runtime.h"

#include "base/error.h"

#if HOOP_HAVE_CUDA

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "base/logging.h"
#include "device/cuda/counter_kernel.h"
#include "device/cuda/kernels.h"
#include "device/cuda/memory_kind.h"

namespace hoop {
namespace {

// The calls below name the driver's types; they are the runtime's under other names.
static_assert(sizeof(cudaIpcMemHandle_t) == kDeviceIpcBytes);
static_assert(sizeof(CUdeviceptr) == sizeof(void*));

// Device descriptions and per-device checks are cached for ordinals below this (more GPUs than
// this in one node are simply checked every time).
constexpr int kCachedDevices = 64;

// "GPU 0 (NVIDIA H200, 0000:19:00.0)". For messages, so it never throws: what CUDA cannot tell is
// left out.
std::string describe(int device) {
  std::string name = "name unknown";
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) == cudaSuccess) name = properties.name;
  std::string bus = "PCI bus id unknown";
  std::array<char, 32> busId{};
  if (cudaDeviceGetPCIBusId(busId.data(), static_cast<int>(busId.size()), device) == cudaSuccess) {
    bus = busId.data();
  }
  // A failed query above is the runtime's "last error" now; a later launch check would blame
  // itself for it.
  cudaGetLastError();
  return str("GPU ", device, " (", name, ", ", bus, ")");
}

// The current device for a message: never throws.
std::string describeCurrent() {
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    cudaGetLastError();
    return str("no current GPU (cudaGetDevice: ", cudaGetErrorName(status), ")");
  }
  return describe(device);
}

template <typename... Args>
[[noreturn]] void failCuda(cudaError_t status, Args&&... what) {
  // Reported here: clear it (where it is not sticky) so the next launch check does not report it.
  cudaGetLastError();
  fail(hoopUnhandledCudaError, std::forward<Args>(what)..., ": ", cudaGetErrorName(status), " (",
       cudaGetErrorString(status), ")");
}

// For the noexcept teardown calls: the error cannot be thrown, so it is logged.
void warnCuda(cudaError_t status, const char* what, const void* handle) {
  cudaGetLastError();
  log(LogLevel::kWarn, LogSubsys::kInit, -1, what, "(", handle, ") on ", describeCurrent(), ": ",
      cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
}

// The driver functions hoop calls, at the ABI version named in their types.
struct DriverCalls {
  PFN_cuStreamWriteValue32_v11070 writeValue32 = nullptr;
  PFN_cuStreamWaitValue32_v11070 waitValue32 = nullptr;
  PFN_cuGetErrorName_v6000 errorName = nullptr;
  PFN_cuGetErrorString_v6000 errorString = nullptr;
};

template <typename Function>
Function driverFunction(const char* symbol, int version) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status = cudaGetDriverEntryPointByVersion(
      symbol, &function, static_cast<unsigned>(version), cudaEnableDefault, &found);
  if (status == cudaSuccess && found == cudaDriverEntryPointSuccess && function != nullptr) {
    return reinterpret_cast<Function>(function);
  }
  cudaGetLastError();
  int driverVersion = 0;
  cudaDriverGetVersion(&driverVersion);
  cudaGetLastError();
  const char* why = status != cudaSuccess                              ? cudaGetErrorName(status)
                    : found == cudaDriverEntryPointVersionNotSufficent ? "the driver is too old"
                                                                       : "symbol not found";
  fail(hoopUnhandledCudaError, "the CUDA driver has no ", symbol, " for CUDA ", version / 1000, ".",
       version % 1000 / 10, " (", why, "; the driver supports CUDA ", driverVersion / 1000, ".",
       driverVersion % 1000 / 10,
       "): hoop's device flags need the stream memory operations of CUDA 11.7 or later");
}

// Looked up on first use; a failure throws and is retried on the next use.
const DriverCalls& driver() {
  static const DriverCalls calls = [] {
    DriverCalls found;
    // 11.7 gave these their current form, supported on every device without a driver option.
    found.writeValue32 =
        driverFunction<PFN_cuStreamWriteValue32_v11070>("cuStreamWriteValue32", 11070);
    found.waitValue32 =
        driverFunction<PFN_cuStreamWaitValue32_v11070>("cuStreamWaitValue32", 11070);
    found.errorName = driverFunction<PFN_cuGetErrorName_v6000>("cuGetErrorName", 6000);
    found.errorString = driverFunction<PFN_cuGetErrorString_v6000>("cuGetErrorString", 6000);
    return found;
  }();
  return calls;
}

std::string driverErrorText(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver().errorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = "unknown";
  if (driver().errorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = "no text";
  return str(name, " (CUresult ", static_cast<int>(result), ": ", text, ")");
}

// The device's ordinal, or a thrown error.
int current() {
  int device = 0;
  if (const cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) {
    failCuda(status, "cudaGetDevice");
  }
  return device;
}

// Flags need host memory the device can address and the driver's stream memory operations.
// CUDA 13 has no device attribute for the 32-bit operations (the old ones went with the 11.7
// rework, which made them available on every device), so what is checked per device is host
// mapping, and the driver's entry points once; a device that still refuses an operation fails at
// the call, named. Checked once per device: writeFlag and waitFlag are on every step's path.
void checkFlagSupport(int device) {
  static std::array<std::atomic<bool>, kCachedDevices> supported{};
  const bool cacheable = device >= 0 && device < kCachedDevices;
  if (cacheable && supported[static_cast<size_t>(device)].load(std::memory_order_acquire)) return;
  int canMap = 0;
  if (const cudaError_t status =
          cudaDeviceGetAttribute(&canMap, cudaDevAttrCanMapHostMemory, device);
      status != cudaSuccess) {
    failCuda(status, "cudaDeviceGetAttribute(CanMapHostMemory) on ", describe(device));
  }
  if (canMap == 0) {
    fail(hoopUnhandledCudaError, describe(device),
         " cannot map host memory (cudaDevAttrCanMapHostMemory is 0): hoop's device flags live in "
         "host memory mapped for the device");
  }
  driver();
  if (cacheable) supported[static_cast<size_t>(device)].store(true, std::memory_order_release);
}

size_t pageBytes() {
  static const size_t bytes = [] {
    const long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? static_cast<size_t>(page) : size_t{4096};
  }();
  return bytes;
}

cudaStream_t asStream(DeviceStream stream) { return static_cast<cudaStream_t>(stream); }
cudaEvent_t asEvent(DeviceEvent event) { return static_cast<cudaEvent_t>(event); }

class CudaRuntime final : public DeviceRuntime {
 public:
  const char* name() const override { return "cuda"; }

  int currentDevice() override { return current(); }

  std::string describeDevice(int device) override { return describe(device); }

  void* allocate(size_t bytes) override {
    void* data = nullptr;
    if (const cudaError_t status = cudaMalloc(&data, bytes); status != cudaSuccess) {
      failCuda(status, "cudaMalloc(", bytes, " bytes) on ", describeCurrent());
    }
    return data;
  }

  void release(void* data) noexcept override {
    if (data == nullptr) return;
    if (const cudaError_t status = cudaFree(data); status != cudaSuccess) {
      warnCuda(status, "cudaFree", data);
    }
  }

  MemoryKind kindOf(const void* pointer) override { return memoryKindOf(pointer); }

  DeviceIpcHandle exportMemory(void* data) override {
    cudaIpcMemHandle_t handle{};
    if (const cudaError_t status = cudaIpcGetMemHandle(&handle, data); status != cudaSuccess) {
      failCuda(status, "cudaIpcGetMemHandle(", data, ") on ", describeCurrent());
    }
    DeviceIpcHandle exported{};
    std::memcpy(exported.data(), &handle, kDeviceIpcBytes);
    return exported;
  }

  void* importMemory(const DeviceIpcHandle& handle, size_t bytes) override {
    cudaIpcMemHandle_t opened{};
    std::memcpy(&opened, handle.data(), kDeviceIpcBytes);
    void* data = nullptr;
    // Lazy peer access: a buffer on another GPU of the node is reachable over NVLink or PCIe
    // without this process enabling peer access to that GPU first.
    if (const cudaError_t status =
            cudaIpcOpenMemHandle(&data, opened, cudaIpcMemLazyEnablePeerAccess);
        status != cudaSuccess) {
      failCuda(status, "cudaIpcOpenMemHandle of another process's buffer (", bytes, " bytes) on ",
               describeCurrent());
    }
    return data;
  }

  void closeImported(void* data) noexcept override {
    if (data == nullptr) return;
    if (const cudaError_t status = cudaIpcCloseMemHandle(data); status != cudaSuccess) {
      warnCuda(status, "cudaIpcCloseMemHandle", data);
    }
  }

  void* mapHost(void* host, size_t bytes) override {
    const size_t page = pageBytes();
    if (host == nullptr || reinterpret_cast<uintptr_t>(host) % page != 0 || bytes == 0 ||
        bytes % page != 0) {
      fail(hoopInvalidArgument, "mapping host memory for the device: ", host, ", ", bytes,
           " bytes is not whole pages (", page, " bytes each)");
    }
    const int device = current();
    checkFlagSupport(device);
    // Portable: registered for every device of this process, not only the current one. Each
    // process of the host registers its own mapping of the shared memory.
    if (const cudaError_t status =
            cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
        status != cudaSuccess) {
      failCuda(status, "cudaHostRegister(", host, ", ", bytes, " bytes, mapped) on ",
               describe(device));
    }
    void* deviceAddress = nullptr;
    if (const cudaError_t status = cudaHostGetDevicePointer(&deviceAddress, host, 0);
        status != cudaSuccess) {
      cudaHostUnregister(host);
      failCuda(status, "cudaHostGetDevicePointer(", host, ") on ", describe(device));
    }
    return deviceAddress;
  }

  void unmapHost(void* host) noexcept override {
    if (host == nullptr) return;
    if (const cudaError_t status = cudaHostUnregister(host); status != cudaSuccess) {
      warnCuda(status, "cudaHostUnregister", host);
    }
  }

  DeviceStream createStream() override {
    cudaStream_t stream = nullptr;
    // Non-blocking: hoop's streams neither wait for nor hold up work on the legacy default
    // stream, which the application may be using.
    if (const cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        status != cudaSuccess) {
      failCuda(status, "cudaStreamCreateWithFlags(NonBlocking) on ", describeCurrent());
    }
    return stream;
  }

  void destroyStream(DeviceStream stream) noexcept override {
    if (stream == nullptr) return;
    if (const cudaError_t status = cudaStreamDestroy(asStream(stream)); status != cudaSuccess) {
      warnCuda(status, "cudaStreamDestroy", stream);
    }
  }

  DeviceEvent createEvent() override {
    cudaEvent_t event = nullptr;
    if (const cudaError_t status = cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
        status != cudaSuccess) {
      failCuda(status, "cudaEventCreateWithFlags(DisableTiming) on ", describeCurrent());
    }
    return event;
  }

  void destroyEvent(DeviceEvent event) noexcept override {
    if (event == nullptr) return;
    if (const cudaError_t status = cudaEventDestroy(asEvent(event)); status != cudaSuccess) {
      warnCuda(status, "cudaEventDestroy", event);
    }
  }

  void recordEvent(DeviceEvent event, DeviceStream stream) override {
    if (const cudaError_t status = cudaEventRecord(asEvent(event), asStream(stream));
        status != cudaSuccess) {
      failCuda(status, "cudaEventRecord(event ", event, ", stream ", stream, ") on ",
               describeCurrent());
    }
  }

  void streamWaitEvent(DeviceStream stream, DeviceEvent event) override {
    if (const cudaError_t status = cudaStreamWaitEvent(asStream(stream), asEvent(event), 0);
        status != cudaSuccess) {
      failCuda(status, "cudaStreamWaitEvent(stream ", stream, ", event ", event, ") on ",
               describeCurrent());
    }
  }

  void synchronize(DeviceStream stream) override {
    if (const cudaError_t status = cudaStreamSynchronize(asStream(stream)); status != cudaSuccess) {
      failCuda(status, "cudaStreamSynchronize(stream ", stream, ") on ", describeCurrent());
    }
  }

  bool capturing(DeviceStream stream) override {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (const cudaError_t status = cudaStreamIsCapturing(asStream(stream), &capture);
        status != cudaSuccess) {
      failCuda(status, "cudaStreamIsCapturing(stream ", stream, ") on ", describeCurrent());
    }
    // An invalidated capture still counts: the stream is in capture mode until it ends.
    return capture != cudaStreamCaptureStatusNone;
  }

  void upload(void* device, const void* host, size_t bytes) override {
    if (bytes == 0) return;
    if (const cudaError_t status = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
        status != cudaSuccess) {
      failCuda(status, "cudaMemcpy(", bytes, " bytes, host to device) on ", describeCurrent());
    }
  }

  void download(void* host, const void* device, size_t bytes) override {
    if (bytes == 0) return;
    if (const cudaError_t status = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
        status != cudaSuccess) {
      failCuda(status, "cudaMemcpy(", bytes, " bytes, device to host) on ", describeCurrent());
    }
  }

  void copy(void* dst, const void* src, size_t bytes, DeviceStream stream) override {
    if (bytes == 0 || dst == src) return;
    cuda::copyAsync(dst, src, bytes, stream);
  }

  void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                       DataType type, RedOp op, size_t divisor, DeviceStream stream) override {
    cuda::reduceCopyFinalAsync(out1, out2, a, b, count, type, op, divisor, stream);
  }

  void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor, DeviceStream stream) override {
    cuda::finishAverageAsync(out, in, count, type, op, divisor, stream);
  }

  void scale(void* out, const void* in, size_t count, DataType type, const ScaleFactor& factor,
             DeviceStream stream) override {
    cuda::scaleAsync(out, in, count, type, factor.onDevice, factor.value.data(), stream);
  }

  void writeFlag(uint32_t* flag, uint32_t value, DeviceStream stream) override {
    checkFlagSupport(current());
    // The default flags put a memory barrier before the write (as __threadfence_system, for
    // the stream's earlier work): a peer that sees the flag sees the data it announces.
    const CUresult result =
        driver().writeValue32(asStream(stream), reinterpret_cast<CUdeviceptr>(flag), value,
                              CU_STREAM_WRITE_VALUE_DEFAULT);
    if (result != CUDA_SUCCESS) {
      fail(hoopUnhandledCudaError, "cuStreamWriteValue32(flag ", static_cast<void*>(flag), " = ",
           value, ", stream ", stream, ") on ", describeCurrent(), ": ", driverErrorText(result));
    }
  }

  void waitFlag(const uint32_t* flag, uint32_t mask, DeviceStream stream) override {
    if (mask == 0) fail(hoopInvalidArgument, "waitFlag with mask 0 would never return");
    checkFlagSupport(current());
    // The GPU's front end polls the word: no SM is held while the stream waits, so the ranks of
    // several processes time-sliced on one GPU all make progress.
    const CUresult result = driver().waitValue32(
        asStream(stream), reinterpret_cast<CUdeviceptr>(flag), mask, CU_STREAM_WAIT_VALUE_AND);
    if (result != CUDA_SUCCESS) {
      fail(hoopUnhandledCudaError, "cuStreamWaitValue32(flag ", static_cast<const void*>(flag),
           " & ", mask, ", stream ", stream, ") on ", describeCurrent(), ": ",
           driverErrorText(result));
    }
  }

  void addToCounter(uint32_t* counter, DeviceStream stream) override {
    cuda::addToCounterAsync(counter, stream);
  }
};

}  // namespace

DeviceRuntime& cudaDeviceRuntime() {
  static CudaRuntime runtime;
  return runtime;
}

}  // namespace hoop

#else  // !HOOP_HAVE_CUDA

namespace hoop {

DeviceRuntime& cudaDeviceRuntime() {
  fail(hoopInvalidUsage, "this build of hoop has no CUDA (HOOP_WITH_CUDA=OFF or nvcc not found)");
}

}  // namespace hoop

#endif  // HOOP_HAVE_CUDA
