// kernels.h for a build without CUDA: the same entry points, each a clear error, so code that
// reaches them by mistake learns why instead of failing to link.
#include "device/cuda/kernels.h"

#if !HOOP_HAVE_CUDA

#include "base/error.h"

namespace hoop::cuda {
namespace {

[[noreturn]] void builtWithoutCuda(const char* what) {
  fail(hoopInvalidUsage, what,
       ": this hoop was built without CUDA (configure with HOOP_WITH_CUDA=ON where nvcc is "
       "installed)");
}

}  // namespace

bool kernelsBuilt() { return false; }

void reduceCopyFinalAsync(void*, void*, const void*, const void*, size_t, DataType, RedOp, size_t,
                          CudaStream) {
  builtWithoutCuda("CUDA reduce kernel");
}

void finishAverageAsync(void*, const void*, size_t, DataType, RedOp, size_t, CudaStream) {
  builtWithoutCuda("CUDA average kernel");
}

void scaleAsync(void*, const void*, size_t, DataType, const void*, const void*, CudaStream) {
  builtWithoutCuda("CUDA scale kernel");
}

void copyAsync(void*, const void*, size_t, CudaStream) { builtWithoutCuda("CUDA copy kernel"); }

}  // namespace hoop::cuda

#endif  // !HOOP_HAVE_CUDA
