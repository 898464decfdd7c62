// The emulated kernels give the CPU kernels' bits: run on a stream over device memory, compared
// with device/cpu/reduce.h run directly and with the values written out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "device/cpu/reduce.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

// Device memory holding a copy of `values`, released at scope exit.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& values)
      : count_(values.size()), data_(static_cast<T*>(emulation().allocate(count_ * sizeof(T)))) {
    std::memcpy(data_, values.data(), count_ * sizeof(T));
  }
  explicit DeviceArray(size_t count) : DeviceArray(std::vector<T>(count, T{})) {}
  ~DeviceArray() { emulation().release(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return data_; }
  std::vector<T> values() const { return std::vector<T>(data_, data_ + count_); }

 private:
  size_t count_;
  T* data_;
};

TEST(DeviceEmulatedKernelTest, Int32SumAndAverage) {
  Stream stream;
  const std::vector<int32_t> a = {1, -2, 3, 100, -7, 2147483647};
  const std::vector<int32_t> b = {4, 5, -6, 1, 0, 1};
  DeviceArray<int32_t> da(a), db(b), sum(a.size()), sumCopy(a.size()), avg(a.size());
  emulation().reduceCopyFinal(sum.get(), sumCopy.get(), da.get(), db.get(), a.size(),
                              DataType::kInt32, RedOp::kSum, 1, stream);
  emulation().reduceCopyFinal(avg.get(), nullptr, da.get(), db.get(), a.size(), DataType::kInt32,
                              RedOp::kAvg, 2, stream);
  emulation().synchronize(stream);

  // Sums wrap, averages truncate toward zero (-7 / 2 = -3), as reduce.h says.
  const std::vector<int32_t> expectedSum = {5, 3, -3, 101, -7, INT32_MIN};
  const std::vector<int32_t> expectedAvg = {2, 1, -1, 50, -3, INT32_MIN / 2};
  EXPECT_EQ(sum.values(), expectedSum);
  EXPECT_EQ(sumCopy.values(), expectedSum);
  EXPECT_EQ(avg.values(), expectedAvg);

  std::vector<int32_t> reference(a.size());
  reduceCopyFinal(reference.data(), nullptr, a.data(), b.data(), a.size(), DataType::kInt32,
                  RedOp::kAvg, 2);
  EXPECT_EQ(avg.values(), reference);
}

TEST(DeviceEmulatedKernelTest, FloatSumAverageAndFinishAverage) {
  Stream stream;
  const std::vector<float> a = {1, -2, 3, 1024, -7, 0};
  const std::vector<float> b = {3, 6, -11, 4, 1, -0.0f};
  DeviceArray<float> da(a), db(b), sum(a.size()), avg(a.size()), finished(a.size());
  emulation().reduceCopyFinal(sum.get(), nullptr, da.get(), db.get(), a.size(), DataType::kFloat32,
                              RedOp::kSum, 1, stream);
  emulation().reduceCopyFinal(avg.get(), nullptr, da.get(), db.get(), a.size(), DataType::kFloat32,
                              RedOp::kAvg, 4, stream);
  emulation().finishAverage(finished.get(), sum.get(), a.size(), DataType::kFloat32, RedOp::kAvg, 4,
                            stream);
  emulation().synchronize(stream);

  const std::vector<float> expectedSum = {4, 4, -8, 1028, -6, 0};
  const std::vector<float> expectedAvg = {1, 1, -2, 257, -1.5f, 0};
  // Bit for bit, not within a tolerance.
  const auto bits = [](const std::vector<float>& values) {
    std::vector<uint32_t> out(values.size());
    std::memcpy(out.data(), values.data(), values.size() * sizeof(float));
    return out;
  };
  EXPECT_EQ(bits(sum.values()), bits(expectedSum));
  EXPECT_EQ(bits(avg.values()), bits(expectedAvg));
  EXPECT_EQ(bits(finished.values()), bits(expectedAvg));

  std::vector<float> reference(a.size());
  finishAverage(reference.data(), expectedSum.data(), a.size(), DataType::kFloat32, RedOp::kAvg, 4);
  EXPECT_EQ(bits(finished.values()), bits(reference));
}

TEST(DeviceEmulatedKernelTest, CopyOfNothingOrOntoItselfChangesNothing) {
  Stream stream;
  std::vector<int> data = {1, 2, 3};
  std::vector<int> other = {9, 9, 9};
  emulation().copy(data.data(), data.data(), data.size() * sizeof(int), stream);
  emulation().copy(data.data(), other.data(), 0, stream);
  emulation().copy(data.data(), other.data(), sizeof(int), stream);
  emulation().synchronize(stream);
  EXPECT_EQ(data, (std::vector<int>{9, 2, 3}));
}

}  // namespace
}  // namespace hoop::testing
