// Schedules move and reduce data only through the executor seam (device/executor.h): with a
// counting executor registered for host memory, a ring allreduce between two ranks (threads of
// this process) reaches it for its reductions and still computes exact sums.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "device/cpu/host_executor.h"
#include "device/executor.h"
#include "hoop/hoop.h"

namespace hoop {
namespace {

// The host executor, counting what it is asked to do.
class CountingExecutor final : public Executor {
 public:
  std::atomic<size_t> copies{0};
  std::atomic<size_t> reductions{0};
  mutable std::atomic<size_t> stagings{0};

  MemoryKind memory() const override { return MemoryKind::kHost; }
  void copy(void* dst, const void* src, size_t bytes) override {
    ++copies;
    host_.copy(dst, src, bytes);
  }
  void reduce(void* out, const void* a, const void* b, size_t count, DataType type,
              RedOp op) override {
    ++reductions;
    host_.reduce(out, a, b, count, type, op);
  }
  void reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op,
                   size_t divisor) override {
    ++reductions;
    host_.reduceFinal(out, a, b, count, type, op, divisor);
  }
  void reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count, DataType type,
                  RedOp op) override {
    ++reductions;
    host_.reduceCopy(out1, out2, a, b, count, type, op);
  }
  void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                       DataType type, RedOp op, size_t divisor) override {
    ++reductions;
    host_.reduceCopyFinal(out1, out2, a, b, count, type, op, divisor);
  }
  void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor) override {
    ++reductions;
    host_.finishAverage(out, in, count, type, op, divisor);
  }
  std::unique_ptr<Staging> newStaging() const override {
    ++stagings;
    return host_.newStaging();
  }

 private:
  HostExecutor host_;
};

TEST(ExecutorSeam, RingAllReduceRunsThroughTheRegisteredExecutor) {
  constexpr size_t kCount = 1 << 16;
  constexpr int kRanks = 2;
  CountingExecutor counting;
  const ExecutorRegistration registration(MemoryKind::kHost, counting);
  ASSERT_EQ(&executorFor(MemoryKind::kHost), &counting);

  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      hoopComm_t comm = nullptr;
      ASSERT_EQ(hoopCommInitRank(&comm, kRanks, id, rank), hoopSuccess)
          << hoopGetLastError(nullptr);
      ASSERT_EQ(hoopCommSetAlgorithms(comm, "allreduce:=ring"), hoopSuccess)
          << hoopGetLastError(comm);
      std::vector<int32_t> data(kCount);
      for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<int32_t>(i % 1000) * (rank + 1);
      ASSERT_EQ(hoopAllReduce(data.data(), data.data(), kCount, hoopInt32, hoopSum, comm, nullptr),
                hoopSuccess)
          << hoopGetLastError(comm);
      for (size_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(data[i], static_cast<int32_t>(i % 1000) * 3) << "rank " << rank << " at " << i;
      }
      const char* name = nullptr;
      ASSERT_EQ(hoopCommScheduleName(comm, hoopCollAllReduce, kCount, hoopInt32, &name),
                hoopSuccess);
      EXPECT_STREQ(name, "ring");
      hoopCommDestroy(comm);
    });
  }
  for (std::thread& rank : ranks) rank.join();
  // On 2 ranks each rank reduces its own block (in one piece or more); the executor did it, and
  // the sums above are exact.
  EXPECT_GE(counting.reductions.load(), static_cast<size_t>(kRanks));
  EXPECT_GE(counting.stagings.load(), 1u);
}

TEST(ExecutorSeam, RegistrationRestoresThePreviousExecutor) {
  Executor& builtIn = executorFor(MemoryKind::kHost);
  {
    CountingExecutor counting;
    const ExecutorRegistration registration(MemoryKind::kHost, counting);
    EXPECT_EQ(&executorFor(MemoryKind::kHost), &counting);
  }
  EXPECT_EQ(&executorFor(MemoryKind::kHost), &builtIn);
}

}  // namespace
}  // namespace hoop
