#include "transport/cuda_ipc/ipc_memory.h"

#include <unistd.h>

#include <cstring>

#include "base/error.h"

#if HOOP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hoop::cuda_ipc {

#if HOOP_HAVE_CUDA

namespace {

[[noreturn]] void failCuda(cudaError_t status, const char* what, size_t bytes, int device) {
  fail(hoopUnhandledCudaError, what, " (", bytes, " bytes, device ", device,
       "): ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
}

void check(cudaError_t status, const char* what, size_t bytes, int device) {
  if (status != cudaSuccess) failCuda(status, what, bytes, device);
}

// Makes `device` current for a scope and puts the caller's device back, so exporting on one GPU
// does not move the caller's thread to another.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice", 0, device);
    if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice", 0, device);
  }
  ~ScopedDevice() { cudaSetDevice(previous_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

uint32_t thisPid() { return static_cast<uint32_t>(getpid()); }

void checkNotOwn(uint32_t ownerPid, const char* what, int peer) {
  if (ownerPid == thisPid()) {
    fail(hoopInvalidUsage, "rank ", peer, "'s ", what, " was exported by this very process (pid ",
         ownerPid,
         "): CUDA cannot open its own IPC handles; ranks in one process share pointers directly");
  }
}

int currentDevice() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice", 0, -1);
  return device;
}

}  // namespace

ExportedDeviceBuffer::ExportedDeviceBuffer(size_t bytes, int device) {
  if (bytes == 0 || bytes > kMaxIpcBufferBytes) {
    fail(hoopInvalidArgument, "CUDA IPC export: ", bytes, " bytes (allowed: 1 to 2^48)");
  }
  ScopedDevice on(device);
  check(cudaMalloc(&data_, bytes), "cudaMalloc for a CUDA IPC buffer", bytes, device);
  cudaIpcMemHandle_t handle;
  const cudaError_t status = cudaIpcGetMemHandle(&handle, data_);
  if (status != cudaSuccess) {
    cudaFree(data_);
    failCuda(status, "cudaIpcGetMemHandle", bytes, device);
  }
  static_assert(sizeof(handle) == kIpcHandleBytes);
  std::memcpy(descriptor_.handle.data(), &handle, kIpcHandleBytes);
  descriptor_.bytes = bytes;
  descriptor_.device = device;
  descriptor_.ownerPid = thisPid();
}

ExportedDeviceBuffer::~ExportedDeviceBuffer() { cudaFree(data_); }

ImportedDeviceBuffer::ImportedDeviceBuffer(const IpcMemoryDescriptor& descriptor, int peer)
    : bytes_(descriptor.bytes) {
  checkNotOwn(descriptor.ownerPid, "CUDA IPC memory handle", peer);
  cudaIpcMemHandle_t handle;
  std::memcpy(&handle, descriptor.handle.data(), kIpcHandleBytes);
  const cudaError_t status = cudaIpcOpenMemHandle(&data_, handle, cudaIpcMemLazyEnablePeerAccess);
  if (status != cudaSuccess) {
    fail(hoopUnhandledCudaError, "cudaIpcOpenMemHandle of rank ", peer, "'s buffer (",
         descriptor.bytes, " bytes on its device ", descriptor.device, ", pid ",
         descriptor.ownerPid, ") on this rank's device ", currentDevice(), ": ",
         cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
  }
}

ImportedDeviceBuffer::~ImportedDeviceBuffer() { cudaIpcCloseMemHandle(data_); }

ExportedEvent::ExportedEvent(int device) {
  ScopedDevice on(device);
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming | cudaEventInterprocess),
        "cudaEventCreateWithFlags(Interprocess)", 0, device);
  event_ = event;
  cudaIpcEventHandle_t handle;
  const cudaError_t status = cudaIpcGetEventHandle(&handle, event);
  if (status != cudaSuccess) {
    cudaEventDestroy(event);
    failCuda(status, "cudaIpcGetEventHandle", 0, device);
  }
  static_assert(sizeof(handle) == kIpcHandleBytes);
  std::memcpy(descriptor_.handle.data(), &handle, kIpcHandleBytes);
  descriptor_.ownerPid = thisPid();
}

ExportedEvent::~ExportedEvent() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

void ExportedEvent::record(void* stream) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)),
        "cudaEventRecord of a CUDA IPC event", 0, currentDevice());
}

ImportedEvent::ImportedEvent(const IpcEventDescriptor& descriptor, int peer) : peer_(peer) {
  checkNotOwn(descriptor.ownerPid, "CUDA IPC event handle", peer);
  cudaIpcEventHandle_t handle;
  std::memcpy(&handle, descriptor.handle.data(), kIpcHandleBytes);
  cudaEvent_t event = nullptr;
  const cudaError_t status = cudaIpcOpenEventHandle(&event, handle);
  if (status != cudaSuccess) {
    fail(hoopUnhandledCudaError, "cudaIpcOpenEventHandle of rank ", peer, "'s event (pid ",
         descriptor.ownerPid, "): ", cudaGetErrorName(status), " (", cudaGetErrorString(status),
         ")");
  }
  event_ = event;
}

ImportedEvent::~ImportedEvent() { cudaEventDestroy(static_cast<cudaEvent_t>(event_)); }

void ImportedEvent::waitOn(void* stream) {
  const cudaError_t status =
      cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event_), 0);
  if (status != cudaSuccess) {
    fail(hoopUnhandledCudaError, "cudaStreamWaitEvent on rank ", peer_,
         "'s CUDA IPC event: ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
  }
}

bool ImportedEvent::completed() {
  const cudaError_t status = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (status == cudaSuccess) return true;
  if (status == cudaErrorNotReady) return false;
  fail(hoopUnhandledCudaError, "cudaEventQuery on rank ", peer_,
       "'s CUDA IPC event: ", cudaGetErrorName(status), " (", cudaGetErrorString(status), ")");
}

#else  // !HOOP_HAVE_CUDA

namespace {

[[noreturn]] void builtWithoutCuda(const char* what) {
  fail(hoopInvalidUsage, what,
       ": this hoop was built without CUDA (configure with HOOP_WITH_CUDA=ON where nvcc is "
       "installed)");
}

}  // namespace

ExportedDeviceBuffer::ExportedDeviceBuffer(size_t, int) { builtWithoutCuda("CUDA IPC export"); }
ExportedDeviceBuffer::~ExportedDeviceBuffer() = default;
ImportedDeviceBuffer::ImportedDeviceBuffer(const IpcMemoryDescriptor&, int) {
  builtWithoutCuda("CUDA IPC import");
}
ImportedDeviceBuffer::~ImportedDeviceBuffer() = default;
ExportedEvent::ExportedEvent(int) { builtWithoutCuda("CUDA IPC event export"); }
ExportedEvent::~ExportedEvent() = default;
void ExportedEvent::record(void*) { builtWithoutCuda("CUDA IPC event record"); }
ImportedEvent::ImportedEvent(const IpcEventDescriptor&, int) {
  builtWithoutCuda("CUDA IPC event import");
}
ImportedEvent::~ImportedEvent() = default;
void ImportedEvent::waitOn(void*) { builtWithoutCuda("CUDA IPC event wait"); }
bool ImportedEvent::completed() { builtWithoutCuda("CUDA IPC event query"); }

#endif  // HOOP_HAVE_CUDA

}  // namespace hoop::cuda_ipc
