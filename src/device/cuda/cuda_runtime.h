// The CUDA implementation of DeviceRuntime (device/device_runtime.h): the CUDA runtime (linked
// statically) for memory, streams, events, IPC and host registration, the kernels of kernels.h,
// and the driver's stream memory operations for flags. No CUDA types here.
//
// In a build without CUDA (HOOP_HAVE_CUDA=0) cudaDeviceRuntime() throws hoopInvalidUsage.
#pragma once

#include "device/device_runtime.h"

namespace hoop {

// The process's one CUDA runtime object. Creating it calls no CUDA function: CUDA initialises
// on the first method that needs it.
DeviceRuntime& cudaDeviceRuntime();

}  // namespace hoop
