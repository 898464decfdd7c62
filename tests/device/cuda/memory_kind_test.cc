// Pointer classification and the CUDA launchers' host-side behaviour, on any machine: host memory
// is "host" without loading or initialising CUDA, and the launchers check their arguments before
// touching CUDA. (The device-memory cases are in gpu_memory_test.cc.)
#include "device/cuda/memory_kind.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "device/cuda/kernels.h"
#include "transport/cuda_ipc/ipc_memory.h"

#if HOOP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hoop {
namespace {

bool driverLoaded() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

int staticValue = 1;

TEST(MemoryKindTest, HostMemoryIsHost) {
  int stackValue = 0;
  auto heapValue = std::make_unique<double[]>(1000);
  std::vector<char> big(1 << 20);
  EXPECT_EQ(memoryKindOf(nullptr), MemoryKind::kHost);
  EXPECT_EQ(memoryKindOf(&stackValue), MemoryKind::kHost);
  EXPECT_EQ(memoryKindOf(heapValue.get()), MemoryKind::kHost);
  EXPECT_EQ(memoryKindOf(big.data() + 12345), MemoryKind::kHost);
  EXPECT_EQ(memoryKindOf(&staticValue), MemoryKind::kHost);
  EXPECT_STREQ(memoryKindName(MemoryKind::kDevice), "device");
}

// Runs before any test of this binary calls CUDA (CTest runs each test in a process of its own,
// and this one comes before those that call CUDA): libhoop must not load the driver at startup.
TEST(MemoryKindTest, AskingNeverLoadsTheDriver) {
  ASSERT_FALSE(driverLoaded()) << "libcuda is loaded before any CUDA call: something in the "
                                  "process initialises CUDA at startup";
  int value = 0;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(memoryKindOf(&value), MemoryKind::kHost);
  EXPECT_FALSE(driverLoaded());
}

// The checks that need no GPU: they throw before any CUDA call.
TEST(CudaLaunchArgumentsTest, CountZeroDoesNothing) {
  if (!cuda::kernelsBuilt()) GTEST_SKIP() << "built without CUDA";
  cuda::reduceCopyFinalAsync(nullptr, nullptr, nullptr, nullptr, 0, DataType::kFloat32, RedOp::kSum,
                             1, nullptr);
  cuda::finishAverageAsync(nullptr, nullptr, 0, DataType::kInt64, RedOp::kAvg, 4, nullptr);
  cuda::copyAsync(nullptr, nullptr, 0, nullptr);
}

TEST(CudaLaunchArgumentsTest, MisalignedElementsAreRefusedBeforeTheLaunch) {
  if (!cuda::kernelsBuilt()) GTEST_SKIP() << "built without CUDA";
  // Never dereferenced: the alignment check comes first.
  auto* aligned = reinterpret_cast<void*>(uintptr_t{0x10000});
  auto* odd = reinterpret_cast<void*>(uintptr_t{0x10002});
  try {
    cuda::reduceCopyFinalAsync(aligned, nullptr, aligned, odd, 8, DataType::kFloat32, RedOp::kSum,
                               1, nullptr);
    FAIL() << "a misaligned fp32 input was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("not aligned to the 4-byte float"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(
      cuda::finishAverageAsync(odd, aligned, 3, DataType::kFloat64, RedOp::kAvg, 2, nullptr),
      Error);
}

TEST(CudaLaunchArgumentsTest, WithoutADeviceALaunchIsACudaError) {
  if (!cuda::kernelsBuilt()) GTEST_SKIP() << "built without CUDA";
#if HOOP_HAVE_CUDA
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    GTEST_SKIP() << "a CUDA device is visible: hoop_cuda_gpu_test covers launches";
  }
#endif
  auto* aligned = reinterpret_cast<void*>(uintptr_t{0x10000});
  try {
    cuda::reduceCopyFinalAsync(aligned, nullptr, aligned, aligned, 8, DataType::kFloat32,
                               RedOp::kSum, 1, nullptr);
    FAIL() << "a launch without a CUDA device succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopUnhandledCudaError);
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
}

TEST(CudaLaunchArgumentsTest, BuildsWithoutCudaSayWhy) {
  if (cuda::kernelsBuilt()) GTEST_SKIP() << "built with CUDA";
  try {
    cuda::copyAsync(&staticValue, &staticValue, 4, nullptr);
    FAIL() << "a build without CUDA launched a kernel";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("built without CUDA"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cuda_ipc::ExportedDeviceBuffer(64, 0), Error);
}

}  // namespace
}  // namespace hoop
