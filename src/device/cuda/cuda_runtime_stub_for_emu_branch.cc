// Stand-in for the CUDA runtime until device/cuda/cuda_runtime.cc exists: every use is a clear
// error, so the emulation can be built and tested without it.
#include "base/error.h"
#include "device/device_runtime.h"

namespace hoop {

DeviceRuntime& cudaDeviceRuntime() {
  fail(hoopInvalidUsage,
       "the CUDA device runtime is not in this build (built without CUDA): set "
       "HOOP_DEVICE_EMULATION=1 to run the device path on the CPU");
}

}  // namespace hoop
