#include "transport/rdma/rdma_dmabuf.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>

#include "base/error.h"
#include "base/unique_fd.h"

namespace hoop {
namespace {

// The few driver API entry points this needs, with the driver's types spelled out (no CUDA
// header is needed to build hoop).
using CuResult = int;
constexpr int kPointerAttributeDeviceOrdinal = 9;     // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
constexpr int kDeviceAttributeDmabufSupported = 124;  // CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED
constexpr int kRangeHandleDmabufFd = 1;               // CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD
constexpr size_t kHostPageBytes = 4096;

struct Driver {
  CuResult (*pointerGetAttribute)(void*, int, unsigned long long) = nullptr;
  CuResult (*deviceGetAttribute)(int*, int, int) = nullptr;
  CuResult (*getHandleForAddressRange)(void*, unsigned long long, size_t, int,
                                       unsigned long long) = nullptr;
  std::string why;
};

const Driver& driver() {
  static const Driver loaded = [] {
    Driver d;
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) {
      d.why = "the CUDA driver is not loaded in this process (no device memory to register)";
      return d;
    }
    d.pointerGetAttribute =
        reinterpret_cast<decltype(d.pointerGetAttribute)>(dlsym(handle, "cuPointerGetAttribute"));
    d.deviceGetAttribute =
        reinterpret_cast<decltype(d.deviceGetAttribute)>(dlsym(handle, "cuDeviceGetAttribute"));
    d.getHandleForAddressRange = reinterpret_cast<decltype(d.getHandleForAddressRange)>(
        dlsym(handle, "cuMemGetHandleForAddressRange"));
    if (d.pointerGetAttribute == nullptr || d.deviceGetAttribute == nullptr) {
      d.why = "the CUDA driver lacks cuPointerGetAttribute or cuDeviceGetAttribute";
    } else if (d.getHandleForAddressRange == nullptr) {
      d.why = "the CUDA driver has no cuMemGetHandleForAddressRange (CUDA 11.7 or later)";
    }
    return d;
  }();
  return loaded;
}

}  // namespace

DmabufSupport dmabufSupport(const void* devicePointer) {
  DmabufSupport support;
#if !defined(HOOP_HAVE_VERBS)
  support.why = "this hoop was built without libibverbs' headers";
  (void)devicePointer;
  return support;
#else
  std::string libraryWhy;
  const VerbsLibrary* verbs = verbsLibrary(&libraryWhy);
  if (verbs == nullptr) {
    support.why = "libibverbs cannot be loaded: " + libraryWhy;
    return support;
  }
  if (verbs->regDmabufMr == nullptr) {
    support.why = "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core 34 or later)";
    return support;
  }
  const Driver& cuda = driver();
  if (!cuda.why.empty()) {
    support.why = cuda.why;
    return support;
  }
  int ordinal = -1;
  if (cuda.pointerGetAttribute(&ordinal, kPointerAttributeDeviceOrdinal,
                               reinterpret_cast<uintptr_t>(devicePointer)) != 0 ||
      ordinal < 0) {
    support.why = "the pointer is not device memory the CUDA driver knows";
    return support;
  }
  int supported = 0;
  if (cuda.deviceGetAttribute(&supported, kDeviceAttributeDmabufSupported, ordinal) != 0 ||
      supported == 0) {
    support.why = str("GPU ", ordinal,
                      " cannot export dma-bufs (needs Linux 5.12+ and a driver that supports it)");
    return support;
  }
  support.supported = true;
  return support;
#endif
}

#if defined(HOOP_HAVE_VERBS)

MemoryRegion registerDeviceMemory(const VerbsDevice& device, void* devicePointer, size_t bytes,
                                  int access) {
  const DmabufSupport support = dmabufSupport(devicePointer);
  if (!support.supported) {
    fail(hoopSystemError, "cannot register device memory with ", device.name(),
         " for GPUDirect RDMA: ", support.why, "; it is staged through pinned host memory");
  }
  // The export covers whole host pages; the registration the caller's range within it, with the
  // device pointers themselves as the addresses the peer writes to.
  const auto address = reinterpret_cast<uintptr_t>(devicePointer);
  const uintptr_t first = address / kHostPageBytes * kHostPageBytes;
  const uintptr_t end = (address + bytes + kHostPageBytes - 1) / kHostPageBytes * kHostPageBytes;
  int fd = -1;
  if (driver().getHandleForAddressRange(&fd, first, end - first, kRangeHandleDmabufFd, 0) != 0 ||
      fd < 0) {
    fail(hoopSystemError, "cuMemGetHandleForAddressRange refused to export ", end - first,
         " bytes of device memory as a dma-buf");
  }
  const UniqueFd exported(fd);  // the registration keeps its own reference
  return registerDmabuf(device, exported.get(), address - first, bytes, address, access);
}

#endif

}  // namespace hoop
