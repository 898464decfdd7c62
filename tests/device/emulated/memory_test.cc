// Emulated device memory: what kindOf says, alignment, zero-byte allocations, mapHost.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

TEST(DeviceEmulatedMemoryTest, KindOfKnowsEveryByteOfAnAllocationAndNothingElse) {
  DeviceRuntime& runtime = emulation();
  auto* data = static_cast<char*>(runtime.allocate(100));
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  EXPECT_EQ(runtime.kindOf(data), MemoryKind::kDevice);
  EXPECT_EQ(runtime.kindOf(data + 99), MemoryKind::kDevice);
  EXPECT_EQ(runtime.kindOf(data + 100), MemoryKind::kHost);  // past what was asked for
  EXPECT_EQ(runtime.kindOf(data - 1), MemoryKind::kHost);
  int onTheStack = 0;
  std::vector<int> onTheHeap(16);
  EXPECT_EQ(runtime.kindOf(&onTheStack), MemoryKind::kHost);
  EXPECT_EQ(runtime.kindOf(onTheHeap.data()), MemoryKind::kHost);
  EXPECT_EQ(runtime.kindOf(nullptr), MemoryKind::kHost);

  std::memset(data, 0xab, 100);  // the CPU can use it: it is shared memory
  EXPECT_EQ(static_cast<unsigned char>(data[99]), 0xab);
  runtime.release(data);
  EXPECT_EQ(runtime.kindOf(data), MemoryKind::kHost);
}

TEST(DeviceEmulatedMemoryTest, AllocationsAreZeroFilledAndDistinct) {
  DeviceRuntime& runtime = emulation();
  auto* first = static_cast<unsigned char*>(runtime.allocate(10000));
  auto* second = static_cast<unsigned char*>(runtime.allocate(10000));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first, second);
  EXPECT_EQ(std::vector<unsigned char>(first, first + 10000), std::vector<unsigned char>(10000, 0));
  first[0] = 1;
  EXPECT_EQ(second[0], 0);
  runtime.release(first);
  runtime.release(second);
}

TEST(DeviceEmulatedMemoryTest, ZeroBytesIsNullAndReleasingNullIsNothing) {
  DeviceRuntime& runtime = emulation();
  EXPECT_EQ(runtime.allocate(0), nullptr);
  runtime.release(nullptr);
  runtime.closeImported(nullptr);
  EXPECT_THROW(runtime.exportMemory(nullptr), Error);
}

TEST(DeviceEmulatedMemoryTest, ThreadsAllocateAndClassifyConcurrently) {
  DeviceRuntime& runtime = emulation();
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (size_t t = 0; t < wrong.size(); ++t) {
    threads.emplace_back([&runtime, &wrong, t] {
      for (int i = 0; i < 50; ++i) {
        auto* data = static_cast<char*>(runtime.allocate(4096 * (1 + t)));
        if (runtime.kindOf(data + 4095) != MemoryKind::kDevice) ++wrong[t];
        runtime.release(data);
        if (runtime.kindOf(&i) != MemoryKind::kHost) ++wrong[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, std::vector<int>(wrong.size(), 0));
}

TEST(DeviceEmulatedMemoryTest, MapHostIsTheHostAddressAndNeedsWholePages) {
  DeviceRuntime& runtime = emulation();
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  EXPECT_EQ(runtime.mapHost(pages, 2 * page), pages);
  runtime.unmapHost(pages);
  try {
    runtime.mapHost(static_cast<char*>(pages) + 64, page);
    FAIL() << "a misaligned address was mapped";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
  }
  EXPECT_THROW(runtime.mapHost(pages, page + 1), Error);
  munmap(pages, 2 * page);
}

}  // namespace
}  // namespace hoop::testing
