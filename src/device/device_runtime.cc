// Which DeviceRuntime this process uses: decided once, from HOOP_DEVICE_EMULATION.
#include "device/device_runtime.h"

#include "base/env.h"
#include "device/emulated/emulated_runtime.h"

namespace hoop {

// The CUDA runtime (device/cuda/): throws hoopInvalidUsage in a build without CUDA.
DeviceRuntime& cudaDeviceRuntime();

bool deviceEmulated() {
  static const bool emulated = envInt("HOOP_DEVICE_EMULATION", 0) == 1;
  return emulated;
}

DeviceRuntime& deviceRuntime() {
  return deviceEmulated() ? emulatedDeviceRuntime() : cudaDeviceRuntime();
}

}  // namespace hoop
