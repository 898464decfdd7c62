// Is this pointer host or device memory? Asked of the CUDA driver, but only when the driver is
// already loaded in this process: without it no device memory can exist, so the answer is "host"
// at the cost of a cached check, with no CUDA call, no initialisation and no error. This works the
// same in builds with and without CUDA (the driver is found with dlopen, never linked).
//
// Why the driver API (cuPointerGetAttribute) and not cudaPointerGetAttributes: the runtime call
// initialises CUDA and may create a context on the current device (hundreds of MiB of GPU memory)
// in a process that never meant to use the GPU, such as a PyTorch job reducing CPU tensors. The
// driver call answers from the driver's address map and creates nothing.
#pragma once

#include "device/memory_kind.h"

namespace hoop {

// The kind of memory `pointer` points into (MemoryKind is in device/memory_kind.h).
MemoryKind memoryKindOf(const void* pointer);
// Whether libcuda is loaded in this process (the same cached probe): without it the process has no
// CUDA context, device or stream.
bool cudaDriverLoaded();

}  // namespace hoop
