// Device memory on a real GPU: pointer classification, and the C API telling device buffers from
// host ones. (A CUDA IPC buffer shared between two processes is tested with the transport, in
// tests/transport/cuda_ipc/ipc_memory_test.cc.)
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/cuda/memory_kind.h"
#include "gpu_test_util.h"
#include "hoop/hoop.h"

namespace hoop {
namespace {

TEST(GpuMemoryKindTest, DevicePinnedAndManagedMemory) {
  HOOP_SKIP_WITHOUT_GPU();
  gpu_test::DeviceBuffer device(4096);
  EXPECT_EQ(memoryKindOf(device.data()), MemoryKind::kDevice);
  EXPECT_EQ(memoryKindOf(device.data() + 4000), MemoryKind::kDevice);
  void* pinned = nullptr;
  HOOP_CUDA_ASSERT(cudaMallocHost(&pinned, 4096));
  EXPECT_EQ(memoryKindOf(pinned), MemoryKind::kHost);
  cudaFreeHost(pinned);
  void* managed = nullptr;
  HOOP_CUDA_ASSERT(cudaMallocManaged(&managed, 4096));
  EXPECT_EQ(memoryKindOf(managed), MemoryKind::kManaged);
  cudaFree(managed);
  int host = 0;
  EXPECT_EQ(memoryKindOf(&host), MemoryKind::kHost);
}

TEST(GpuMemoryKindTest, OneCallTakesDeviceOrHostBuffersNotBoth) {
  HOOP_SKIP_WITHOUT_GPU();
  gpu_test::DeviceBuffer device(4096);
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  hoopComm_t comm = nullptr;
  ASSERT_EQ(hoopCommInitRank(&comm, 1, id, 0), hoopSuccess) << hoopGetLastError(nullptr);
  std::vector<float> host(16, 2.0f);
  EXPECT_EQ(hoopAllReduce(device.data(), host.data(), 16, hoopFloat, hoopSum, comm, nullptr),
            hoopInvalidUsage);
  const std::string message = hoopGetLastError(comm);
  EXPECT_NE(message.find("sendbuff is device memory but recvbuff is host memory"),
            std::string::npos)
      << message;
  // Device buffers alone are enqueued on the stream (one rank: a copy); host ones still block.
  cudaStream_t stream = nullptr;
  HOOP_CUDA_ASSERT(cudaStreamCreate(&stream));
  HOOP_CUDA_ASSERT(cudaMemcpy(device.data(), host.data(), 64, cudaMemcpyHostToDevice));
  EXPECT_EQ(
      hoopAllReduce(device.data(), device.data() + 1024, 16, hoopFloat, hoopSum, comm, stream),
      hoopSuccess)
      << hoopGetLastError(comm);
  HOOP_CUDA_ASSERT(cudaStreamSynchronize(stream));
  std::vector<float> back(16, 0.0f);
  HOOP_CUDA_ASSERT(cudaMemcpy(back.data(), device.data() + 1024, 64, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, host);
  EXPECT_EQ(hoopAllReduce(host.data(), host.data(), 16, hoopFloat, hoopSum, comm, nullptr),
            hoopSuccess)
      << hoopGetLastError(comm);
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
  HOOP_CUDA_ASSERT(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace hoop
