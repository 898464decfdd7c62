// GPUDirect RDMA through dma-buf: device memory registered with the RDMA card directly, so the
// card reads and writes GPU memory with no staging copy through host memory. The CUDA driver
// exports a range of device memory as a dma-buf file descriptor (cuMemGetHandleForAddressRange),
// and libibverbs registers it (ibv_reg_dmabuf_mr). Both sides must allow it: the driver says so
// per device (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, Linux 5.12+ with an open kernel module or a
// recent driver), the library by having the call (rdma-core 34+), and the card's driver by
// accepting the registration. Where any of them does not, device memory must be staged through
// pinned host memory, and the reason is what dmabufSupport() says.
//
// The driver is found with dlopen, only when it is already loaded (a process without device
// memory has nothing to register), so this costs nothing elsewhere.
#pragma once

#include <cstddef>
#include <string>

#include "transport/rdma/verbs_objects.h"

namespace hoop {

struct DmabufSupport {
  bool supported = false;
  std::string why;  // !supported: what is missing
};

// Whether device memory at `devicePointer` can be registered for RDMA through dma-buf here.
DmabufSupport dmabufSupport(const void* devicePointer);

#if defined(HOOP_HAVE_VERBS)
// Registers [devicePointer, devicePointer + bytes) of device memory on `device` through dma-buf,
// with remote addresses equal to the device pointers. Throws hoopSystemError saying what refused
// (dmabufSupport's reason, the export, or the registration).
MemoryRegion registerDeviceMemory(const VerbsDevice& device, void* devicePointer, size_t bytes,
                                  int access);
#endif

}  // namespace hoop
