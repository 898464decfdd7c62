#include "gpu_test_util.h"

namespace hoop::gpu_test {

std::string noDeviceReason() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess) {
    return std::string("no CUDA device visible (cudaGetDeviceCount: ") + cudaGetErrorName(status) +
           ", " + cudaGetErrorString(status) + ")";
  }
  if (devices == 0) return "no CUDA device visible (cudaGetDeviceCount: 0 devices)";
  return "";
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess) {
    ADD_FAILURE() << "cudaMalloc(" << bytes << "): " << cudaGetErrorString(status);
    return;
  }
  data_ = static_cast<char*>(p);
}

DeviceBuffer::~DeviceBuffer() { cudaFree(data_); }

}  // namespace hoop::gpu_test
