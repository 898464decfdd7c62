// The executor seam: schedules (src/algorithms) say which piece goes where, with offsets and
// counts; an executor owns how bytes move and combine in one kind of memory. The host executor
// (device/cpu/host_executor.h) runs memcpy and the SIMD kernels of device/cpu/reduce.h; a CUDA
// executor will run the same operations as kernels on a stream, so one schedule serves both.
//
// Every operation works on one whole piece (a virtual call per piece, never per element), takes
// pointers into memory of the executor's kind, and follows reduce.h's contract: counts are in
// elements, outputs may alias inputs exactly but never partially, results are bitwise identical
// to the CPU kernels' on every executor.
#pragma once

#include <cstddef>
#include <memory>

#include "base/types.h"
#include "device/memory_kind.h"

namespace hoop {

// Memory of an executor's kind for pieces in flight and intermediate results, grown on demand
// and kept for later calls. Each team holds its own: teams may run on different threads.
class Staging {
 public:
  virtual ~Staging() = default;
  // At least `bytes` of it. Growing moves it: take it once per operation, at the largest size the
  // operation needs.
  virtual char* reserve(size_t bytes) = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // The memory its operations read and write.
  virtual MemoryKind memory() const = 0;

  // dst = src, `bytes` bytes. The ranges may overlap; 0 bytes may come with null pointers.
  virtual void copy(void* dst, const void* src, size_t bytes) = 0;
  // out = a op b, element-wise; kAvg sums (the division is the final step's).
  virtual void reduce(void* out, const void* a, const void* b, size_t count, DataType type,
                      RedOp op) = 0;
  // The last reduction: for kAvg also divides by `divisor` (the ranks that contributed).
  virtual void reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type,
                           RedOp op, size_t divisor) = 0;
  // out1 = out2 = a op b in one pass over the inputs; out2 may be null (then this is reduce).
  virtual void reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count,
                          DataType type, RedOp op) = 0;
  // Same, dividing for kAvg as reduceFinal.
  virtual void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                               DataType type, RedOp op, size_t divisor) = 0;
  // out = in / divisor for kAvg, else out = in: an average that one rank finishes alone.
  virtual void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                             size_t divisor) = 0;

  // New, empty staging memory of this executor's kind.
  virtual std::unique_ptr<Staging> newStaging() const = 0;
};

// The executor that serves memory of `kind`: one registered with useExecutor, else the built-in
// one. hoopInvalidUsage when this build has none for that kind. Thread-safe; the executor's
// operations are too (they keep no state between calls).
Executor& executorFor(MemoryKind kind);

// Makes `executor` serve memory of `kind` (a test's, counting calls; later a CUDA build's)
// until the returned registration is destroyed, when the one before it serves again. `executor`
// must outlive the registration. Register before the calls it should serve, not during them.
class ExecutorRegistration {
 public:
  ExecutorRegistration(MemoryKind kind, Executor& executor);
  ~ExecutorRegistration();
  ExecutorRegistration(const ExecutorRegistration&) = delete;
  ExecutorRegistration& operator=(const ExecutorRegistration&) = delete;

 private:
  MemoryKind kind_;
  Executor* previous_;
};

}  // namespace hoop
