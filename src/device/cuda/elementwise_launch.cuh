// What launch.cu needs to start an element-wise kernel, shared with the files that instantiate
// the kernels per element type (elementwise_*.cu), so each type family compiles on its own.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "device/cuda/element_ops.cuh"

namespace hoop::cuda_kernels {

// 256 threads: up to 8 blocks (2048 threads, a full Hopper/Ampere SM) resident where the
// registers allow; the grid is capped per kernel at what is resident (elementwise.cuh).
inline constexpr unsigned kThreadsPerBlock = 256;
inline constexpr size_t kVectorBytes = 16;

enum class KernelOp : uint8_t { kSum, kProd, kMax, kMin, kSumThenDivide, kDivide };
inline constexpr size_t kKernelOps = 6;

// Counts in elements; see elementwise.cuh for the three parts.
struct ElementwiseArgs {
  void* out1 = nullptr;
  void* out2 = nullptr;  // null: one output
  const void* a = nullptr;
  const void* b = nullptr;
  size_t count = 0;
  size_t head = 0;
  size_t vectors = 0;
  Divisor divisor;
};

// Defined in elementwise.cuh, instantiated once per codec in elementwise_*.cu. `workItems`: the
// longest of the three parts (threads wanted); `multiprocessors`: the current device's SM count.
template <typename Codec>
void launchForCodec(KernelOp op, const ElementwiseArgs& args, size_t workItems,
                    unsigned multiprocessors, cudaStream_t stream);

}  // namespace hoop::cuda_kernels
