// The executor for host memory: memmove and the SIMD reduction kernels of reduce.h, staging in
// ordinary heap memory. What every collective on host buffers runs on.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "device/executor.h"

namespace hoop {

class HostExecutor final : public Executor {
 public:
  MemoryKind memory() const override { return MemoryKind::kHost; }
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
};

// Host staging: a heap buffer that only grows.
class HostStaging final : public Staging {
 public:
  char* reserve(size_t bytes) override;

 private:
  std::vector<char> buffer_;
};

}  // namespace hoop
