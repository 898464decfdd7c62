// The executor for device memory: every copy and reduction a schedule asks for becomes a kernel
// enqueued on the call's stream through the device runtime (device_runtime.h), so a schedule
// written for the host runs unchanged on device buffers and returns once its work is enqueued.
// One executor serves one call's stream; the device team makes it for the call.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "device/device_runtime.h"
#include "device/executor.h"

namespace hoop {

// Work recorded for the stream but not yet enqueued (the device connections' posted messages):
// enqueued before each of the executor's own operations, which may depend on it.
class DeferredStreamWork {
 public:
  virtual void flush() = 0;

 protected:
  ~DeferredStreamWork() = default;
};

class DeviceExecutor final : public Executor {
 public:
  DeviceExecutor(DeviceRuntime& runtime, DeviceStream stream, DeferredStreamWork* deferred)
      : runtime_(runtime), stream_(stream), deferred_(deferred) {}

  MemoryKind memory() const override { return MemoryKind::kDevice; }
  // Overlapping ranges (Executor::copy allows them) are copied in pieces no longer than the
  // distance between them, in the order that reads every byte before it is overwritten: the
  // kernels themselves take no overlap.
  void copy(void* dst, const void* src, size_t bytes) override;
  void reduce(void* out, const void* a, const void* b, size_t count, DataType type,
              RedOp op) override;
  void reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op,
                   size_t divisor) override;
  void reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count, DataType type,
                  RedOp op) override;
  void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                       DataType type, RedOp op, size_t divisor) override;
  void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor) override;
  std::unique_ptr<Staging> newStaging() const override;

  DeviceStream stream() const { return stream_; }
  void rebind(DeviceStream stream) { stream_ = stream; }

 private:
  void flushDeferred() {
    if (deferred_ != nullptr) deferred_->flush();
  }

  DeviceRuntime& runtime_;
  DeviceStream stream_;
  DeferredStreamWork* deferred_;
};

// Device memory that only grows. A buffer it outgrows may still be read by work already enqueued
// on a stream, so it is kept, not freed, until the staging itself goes (after the team's streams
// have drained). Growing allocates, which CUDA refuses while a stream is being captured into a
// graph: a call of the largest size made once before the capture sizes it.
class DeviceStaging final : public Staging {
 public:
  explicit DeviceStaging(DeviceRuntime& runtime) : runtime_(runtime) {}
  ~DeviceStaging() override;
  DeviceStaging(const DeviceStaging&) = delete;
  DeviceStaging& operator=(const DeviceStaging&) = delete;

  char* reserve(size_t bytes) override;

 private:
  DeviceRuntime& runtime_;
  char* current_ = nullptr;
  size_t bytes_ = 0;
  std::vector<char*> outgrown_;
};

}  // namespace hoop
