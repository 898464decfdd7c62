// The host executor (device/cpu/host_executor.h): every operation exact on integer-valued data
// for several element types and every op, with the aliasing the schedules use (an output that
// is one or both inputs), copies that overlap, and staging that grows.
#include "device/cpu/host_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "device/executor.h"

namespace hoop {
namespace {

constexpr RedOp kAllOps[] = {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg};
// Odd, so the kernels' vector bodies and their scalar tails both run.
constexpr size_t kCount = 1000 + 37;

// a op b as reduce.h defines it, in T; kAvg sums (the division is reduceFinal's).
template <typename T>
T combine(T a, T b, RedOp op) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return static_cast<T>(a + b);
    case RedOp::kProd: return static_cast<T>(a * b);
    case RedOp::kMax: return std::max(a, b);
    case RedOp::kMin: return std::min(a, b);
  }
  return a;
}

template <typename T>
T finish(T value, RedOp op, size_t divisor) {
  // Integers truncate toward zero, as C++ division does; floats divide exactly here.
  return op == RedOp::kAvg ? static_cast<T>(value / static_cast<T>(divisor)) : value;
}

// Small integers (signed types include negatives), so sums, products and the averages below are
// exact in every type, floats included.
template <typename T>
std::vector<T> values(int seed) {
  std::vector<T> v(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    const int x = static_cast<int>((i * 7 + static_cast<size_t>(seed) * 13) % 9);
    v[i] = static_cast<T>(std::is_signed_v<T> ? x - 4 : x);
  }
  return v;
}

template <typename T, DataType D>
struct Case {
  using Type = T;
  static constexpr DataType kType = D;
};

template <typename C>
class HostExecutorTest : public ::testing::Test {};
using Types = ::testing::Types<Case<int8_t, DataType::kInt8>, Case<uint8_t, DataType::kUint8>,
                               Case<int32_t, DataType::kInt32>, Case<uint64_t, DataType::kUint64>,
                               Case<int64_t, DataType::kInt64>, Case<float, DataType::kFloat32>,
                               Case<double, DataType::kFloat64>>;
TYPED_TEST_SUITE(HostExecutorTest, Types);

TYPED_TEST(HostExecutorTest, ReductionsAreExactWithEveryAliasing) {
  using T = typename TypeParam::Type;
  constexpr DataType type = TypeParam::kType;
  HostExecutor executor;
  const std::vector<T> a = values<T>(1);
  const std::vector<T> b = values<T>(2);
  constexpr size_t kDivisor = 3;
  for (const RedOp op : kAllOps) {
    std::vector<T> partial(kCount), final(kCount), square(kCount);
    for (size_t i = 0; i < kCount; ++i) {
      partial[i] = combine(a[i], b[i], op);
      final[i] = finish(partial[i], op, kDivisor);
      square[i] = combine(a[i], a[i], op);
    }
    SCOPED_TRACE(static_cast<int>(op));

    std::vector<T> out(kCount);
    executor.reduce(out.data(), a.data(), b.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduce";
    out = a;
    executor.reduce(out.data(), out.data(), b.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduce into the first input";
    out = b;
    executor.reduce(out.data(), a.data(), out.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduce into the second input";
    out = a;
    executor.reduce(out.data(), out.data(), out.data(), kCount, type, op);
    EXPECT_EQ(out, square) << "reduce with all three the same";

    executor.reduceFinal(out.data(), a.data(), b.data(), kCount, type, op, kDivisor);
    EXPECT_EQ(out, final) << "reduceFinal";
    out = a;
    executor.reduceFinal(out.data(), out.data(), b.data(), kCount, type, op, kDivisor);
    EXPECT_EQ(out, final) << "reduceFinal into the first input";

    std::vector<T> second(kCount);
    executor.reduceCopy(out.data(), second.data(), a.data(), b.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduceCopy, first output";
    EXPECT_EQ(second, partial) << "reduceCopy, second output";
    out = b;
    executor.reduceCopy(out.data(), nullptr, a.data(), out.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduceCopy with one output, into an input";
    out = a;
    executor.reduceCopy(out.data(), second.data(), out.data(), b.data(), kCount, type, op);
    EXPECT_EQ(out, partial) << "reduceCopy into an input";
    EXPECT_EQ(second, partial) << "reduceCopy into an input, second output";

    std::fill(second.begin(), second.end(), T{});
    executor.reduceCopyFinal(out.data(), second.data(), a.data(), b.data(), kCount, type, op,
                             kDivisor);
    EXPECT_EQ(out, final) << "reduceCopyFinal";
    EXPECT_EQ(second, final) << "reduceCopyFinal, second output";
    out = a;
    executor.reduceCopyFinal(out.data(), nullptr, out.data(), b.data(), kCount, type, op, kDivisor);
    EXPECT_EQ(out, final) << "reduceCopyFinal with one output, into an input";

    std::vector<T> finished(kCount);
    for (size_t i = 0; i < kCount; ++i) finished[i] = finish(partial[i], op, kDivisor);
    executor.finishAverage(out.data(), partial.data(), kCount, type, op, kDivisor);
    EXPECT_EQ(out, finished) << "finishAverage";
    out = partial;
    executor.finishAverage(out.data(), out.data(), kCount, type, op, kDivisor);
    EXPECT_EQ(out, finished) << "finishAverage in place";
  }
}

TEST(HostExecutor, CopiesOverlappingRangesAsMemmove) {
  HostExecutor executor;
  std::vector<uint8_t> data(300);
  std::iota(data.begin(), data.end(), 0);
  std::vector<uint8_t> expected = data;
  std::memmove(expected.data() + 10, expected.data(), 200);
  executor.copy(data.data() + 10, data.data(), 200);
  EXPECT_EQ(data, expected) << "forward overlap";
  std::memmove(expected.data(), expected.data() + 17, 250);
  executor.copy(data.data(), data.data() + 17, 250);
  EXPECT_EQ(data, expected) << "backward overlap";
  executor.copy(data.data(), data.data(), data.size());
  EXPECT_EQ(data, expected) << "onto itself";

  std::vector<uint8_t> other(300, 0xab);
  executor.copy(other.data(), data.data(), other.size());
  EXPECT_EQ(other, data) << "disjoint";
  executor.copy(nullptr, nullptr, 0);  // 0 bytes may come with null buffers
}

TEST(HostExecutor, ServesHostMemoryAndStagesInGrowingMemory) {
  HostExecutor executor;
  EXPECT_EQ(executor.memory(), MemoryKind::kHost);
  EXPECT_EQ(executorFor(MemoryKind::kHost).memory(), MemoryKind::kHost);
  const std::unique_ptr<Staging> staging = executor.newStaging();
  char* small = staging->reserve(100);
  ASSERT_NE(small, nullptr);
  std::memset(small, 1, 100);
  EXPECT_EQ(staging->reserve(50), small) << "a smaller request keeps the buffer";
  char* large = staging->reserve(1 << 20);
  ASSERT_NE(large, nullptr);
  std::memset(large, 2, 1 << 20);  // all of it is writable
  EXPECT_EQ(staging->reserve(0), large);
}

TEST(ExecutorRegistry, AKindWithoutAnExecutorIsInvalidUsage) {
  try {
    executorFor(MemoryKind::kDevice);
    ADD_FAILURE() << "device memory has no executor in this build";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hoop
