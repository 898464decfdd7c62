// Capturing a stream into a graph and replaying it, for the device worker: CUDA graphs on a GPU,
// the emulation's graphs under HOOP_DEVICE_EMULATION=1.
#pragma once

#include <memory>

#include "device/device_runtime.h"

namespace hoop::test {

class CapturedGraph {
 public:
  virtual ~CapturedGraph() = default;
  // Enqueues one replay on `stream`.
  virtual void launch(DeviceStream stream) = 0;
};

void beginCapture(DeviceStream stream);
std::unique_ptr<CapturedGraph> endCapture(DeviceStream stream);

}  // namespace hoop::test
