// DeviceRuntime on the CPU (device_runtime.h says what it stands in for): streams are threads
// (emulated_stream.h), events are records those threads mark (emulated_event.h), device memory
// is named shared-memory segments (device_segment.h) so other processes can import it, kernels are
// the CPU kernels of device/cpu/reduce.h, flags are atomics (flag_ops.h).
//
// Choices where CUDA leaves room:
//   - allocate(0) returns nullptr, as cudaMalloc does; release(nullptr) does nothing, and
//     exportMemory(nullptr) is hoopInvalidArgument.
//   - Allocations are page-aligned (mmap), and kindOf() says kDevice for every address inside one
//     (the bytes asked for) or inside an imported mapping, kHost for anything else.
//   - importMemory refuses a handle this process exported (hoopInvalidUsage), as CUDA does, and a
//   `bytes` larger than the export (hoopInvalidArgument); each import is its own mapping.
//   - mapHost returns the host address itself: the "device" addresses host memory directly.
//   - Graph capture follows CUDA's multi-stream rules (emulated_graph.h): a stream that waits on
//     an event recorded in a capture joins it. An event recorded inside a capture is a signal of
//     the graph: replays signal their own copy, never the event, and waiting on it once the
//     capture has ended is hoopInvalidUsage. A capturing stream waiting on an event recorded
//     outside the capture is hoopInvalidUsage too (CUDA accepts it as an external dependency in
//     some modes).
#pragma once

#include "device/device_runtime.h"

namespace hoop {

// The one emulated runtime of the process. Never destroyed: stream threads may outlive main().
DeviceRuntime& emulatedDeviceRuntime();

namespace emulated {

class EmulatedRuntime final : public DeviceRuntime {
 public:
  const char* name() const override { return "emulated"; }
  int currentDevice() override { return 0; }
  std::string describeDevice(int device) override;

  // Memory: emulated_memory.cc.
  void* allocate(size_t bytes) override;
  void release(void* data) noexcept override;
  MemoryKind kindOf(const void* pointer) override;
  DeviceIpcHandle exportMemory(void* data) override;
  void* importMemory(const DeviceIpcHandle& handle, size_t bytes) override;
  void closeImported(void* data) noexcept override;
  void* mapHost(void* host, size_t bytes) override;
  void unmapHost(void* host) noexcept override;
  // The emulated device's memory is the CPU's: a plain copy.
  void upload(void* device, const void* host, size_t bytes) override;
  void download(void* host, const void* device, size_t bytes) override;

  // Streams and events: emulated_runtime.cc.
  DeviceStream createStream() override;
  void destroyStream(DeviceStream stream) noexcept override;
  DeviceEvent createEvent() override;
  void destroyEvent(DeviceEvent event) noexcept override;
  void recordEvent(DeviceEvent event, DeviceStream stream) override;
  void streamWaitEvent(DeviceStream stream, DeviceEvent event) override;
  void synchronize(DeviceStream stream) override;
  bool capturing(DeviceStream stream) override;

  // Kernels and flags: emulated_kernels.cc.
  void copy(void* dst, const void* src, size_t bytes, DeviceStream stream) override;
  void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                       DataType type, RedOp op, size_t divisor, DeviceStream stream) override;
  void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor, DeviceStream stream) override;
  void scale(void* out, const void* in, size_t count, DataType type, const ScaleFactor& factor,
             DeviceStream stream) override;
  void writeFlag(uint32_t* flag, uint32_t value, DeviceStream stream) override;
  void waitFlag(const uint32_t* flag, uint32_t mask, DeviceStream stream) override;
  void addToCounter(uint32_t* counter, DeviceStream stream) override;
};

}  // namespace emulated
}  // namespace hoop
