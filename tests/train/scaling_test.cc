#include "train/scaling.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "base/half.h"

namespace hoop::train {
namespace {

TEST(Scaling, FloatTypesAreMultipliedExactly) {
  const std::vector<float> in = {1, -2, 3, 1024};
  std::vector<float> out(4);
  scaledCopy(out.data(), in.data(), 4, hoopFloat32, 0.25);
  EXPECT_EQ(out, (std::vector<float>{0.25f, -0.5f, 0.75f, 256}));
  std::vector<double> d = {3, 5};
  scaledCopy(d.data(), d.data(), 2, hoopFloat64, 4);  // in place
  EXPECT_EQ(d, (std::vector<double>{12, 20}));
}

TEST(Scaling, SixteenBitTypesGoThroughFloat) {
  std::vector<uint16_t> h = {floatToHalf(3), floatToHalf(-6)};
  scaledCopy(h.data(), h.data(), 2, hoopFloat16, 0.5);
  EXPECT_EQ(halfToFloat(h[0]), 1.5f);
  EXPECT_EQ(halfToFloat(h[1]), -3.0f);
  std::vector<uint16_t> b = {floatToBf16(5), floatToBf16(7)};
  std::vector<uint16_t> out(2);
  scaledCopy(out.data(), b.data(), 2, hoopBfloat16, 2);
  EXPECT_EQ(bf16ToFloat(out[0]), 10.0f);
  EXPECT_EQ(bf16ToFloat(out[1]), 14.0f);
}

TEST(Scaling, FactorOneAndIntegersCopy) {
  const std::vector<int32_t> in = {7, -9, 11};
  std::vector<int32_t> out(3);
  scaledCopy(out.data(), in.data(), 3, hoopInt32, 1.0);
  EXPECT_EQ(out, in);
  const std::vector<float> f = {1.5f, 2.5f};
  std::vector<float> g(2);
  scaledCopy(g.data(), f.data(), 2, hoopFloat32, 1.0);
  EXPECT_EQ(g, f);
}

}  // namespace
}  // namespace hoop::train
