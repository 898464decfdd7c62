// addToCounterAsync (counter_kernel.h).
#include <cuda_runtime.h>

#include <cstdint>
#include <cuda/atomic>

#include "base/error.h"
#include "device/cuda/counter_kernel.h"

namespace hoop::cuda {
namespace {

// Release at system scope: whatever the stream wrote before (earlier kernels, other threads of
// the host reading after they see the new count) is visible no later than the count itself.
// Device-side atomics on mapped host memory are atomic among device threads; the host only reads.
__global__ void addOneKernel(uint32_t* counter) {
  ::cuda::atomic_ref<uint32_t, ::cuda::thread_scope_system> count(*counter);
  count.fetch_add(1u, ::cuda::memory_order_release);
}

}  // namespace

void addToCounterAsync(uint32_t* counter, void* stream) {
  if (counter == nullptr) fail(hoopInvalidArgument, "CUDA counter kernel: null counter");
  if (reinterpret_cast<uintptr_t>(counter) % alignof(uint32_t) != 0) {
    // On the GPU a misaligned atomic is a sticky error that ends the context.
    fail(hoopInvalidArgument, "CUDA counter kernel: counter ", static_cast<void*>(counter),
         " is not 4-byte aligned");
  }
  addOneKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(counter);
  if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess) {
    fail(hoopUnhandledCudaError, "CUDA counter kernel launch: ", cudaGetErrorName(status), " (",
         cudaGetErrorString(status), ")");
  }
}

}  // namespace hoop::cuda
