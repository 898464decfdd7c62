// Shared by the GPU tests: the skip when no device is visible, and device memory as RAII.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace hoop::gpu_test {

// Empty when a CUDA device is visible, else why not (for GTEST_SKIP).
std::string noDeviceReason();

#define HOOP_SKIP_WITHOUT_GPU()                                                         \
  do {                                                                                  \
    if (const std::string reason = ::hoop::gpu_test::noDeviceReason(); !reason.empty()) \
      GTEST_SKIP() << reason;                                                           \
  } while (0)

// Fails the test (ASSERT-style, from a void function) when a CUDA call failed.
#define HOOP_CUDA_ASSERT(call)                                                             \
  do {                                                                                     \
    const cudaError_t hoopStatus = (call);                                                 \
    ASSERT_EQ(hoopStatus, cudaSuccess) << #call << ": " << cudaGetErrorString(hoopStatus); \
  } while (0)

class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace hoop::gpu_test
