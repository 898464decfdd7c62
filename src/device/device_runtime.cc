// Which DeviceRuntime this process uses: decided once, from HOOP_DEVICE_EMULATION.
#include "device/device_runtime.h"

#include "base/env.h"
#include "device/cuda/cuda_runtime.h"
#include "device/emulated/emulated_runtime.h"

namespace hoop {

bool deviceEmulated() {
  static const bool emulated = envInt("HOOP_DEVICE_EMULATION", 0) == 1;
  return emulated;
}

DeviceRuntime& deviceRuntime() {
  return deviceEmulated() ? emulatedDeviceRuntime() : cudaDeviceRuntime();
}

}  // namespace hoop
