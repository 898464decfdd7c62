#include "dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace hoop::perf {
namespace {

TEST(DataType, NamesAndSizes) {
  EXPECT_EQ(typeName(hoopInt8), "int8");
  EXPECT_EQ(typeName(hoopHalf), "half");
  EXPECT_EQ(typeName(hoopBfloat16), "bfloat16");
  EXPECT_EQ(typeSize(hoopInt8), 1u);
  EXPECT_EQ(typeSize(hoopUint8), 1u);
  EXPECT_EQ(typeSize(hoopHalf), 2u);
  EXPECT_EQ(typeSize(hoopBfloat16), 2u);
  EXPECT_EQ(typeSize(hoopInt32), 4u);
  EXPECT_EQ(typeSize(hoopUint32), 4u);
  EXPECT_EQ(typeSize(hoopFloat), 4u);
  EXPECT_EQ(typeSize(hoopInt64), 8u);
  EXPECT_EQ(typeSize(hoopUint64), 8u);
  EXPECT_EQ(typeSize(hoopDouble), 8u);
  for (hoopDataType_t type : kAllTypes) EXPECT_EQ(parseTypeName(typeName(type)), type);
  for (hoopRedOp_t op : kAllOps) EXPECT_EQ(parseOpName(opName(op)), op);
  // The project's table (tests/base/names_test.cc) holds the other spellings.
  EXPECT_EQ(parseTypeName("float32"), hoopFloat);
  EXPECT_FALSE(parseTypeName("fp8").has_value());
  EXPECT_FALSE(parseOpName("none").has_value());
}

// `-d all` and `-o all` run in nccl-tests' order.
TEST(DataType, AllInNcclTestsOrder) {
  const hoopDataType_t types[] = {hoopInt8,   hoopUint8, hoopInt32, hoopUint32, hoopInt64,
                                  hoopUint64, hoopHalf,  hoopFloat, hoopDouble, hoopBfloat16};
  ASSERT_EQ(std::size(kAllTypes), std::size(types));
  for (size_t i = 0; i < std::size(types); ++i) EXPECT_EQ(kAllTypes[i], types[i]);
  const hoopRedOp_t ops[] = {hoopSum, hoopProd, hoopMax, hoopMin, hoopAvg};
  ASSERT_EQ(std::size(kAllOps), std::size(ops));
  for (size_t i = 0; i < std::size(ops); ++i) EXPECT_EQ(kAllOps[i], ops[i]);
}

TEST(Half, KnownEncodings) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);  // rounds past the largest finite: infinity
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
}

TEST(Half, EveryEncodingRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(floatToHalf(value), bits) << std::hex << bits;
  }
}

TEST(Half, IntegersExactTo2048ThenRoundToEven) {
  for (int v = -2048; v <= 2048; ++v) {
    EXPECT_EQ(halfToFloat(floatToHalf(static_cast<float>(v))), static_cast<float>(v)) << v;
  }
  EXPECT_EQ(halfToFloat(floatToHalf(2049.0f)), 2048.0f);
  EXPECT_EQ(halfToFloat(floatToHalf(2051.0f)), 2052.0f);
}

TEST(Bfloat16, KnownEncodings) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(-2.0f), 0xc000);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_TRUE(
      std::isnan(bfloat16ToFloat(floatToBfloat16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(Bfloat16, EveryEncodingRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float value = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(floatToBfloat16(value), bits) << std::hex << bits;
  }
}

TEST(Bfloat16, IntegersExactTo256ThenRoundToEven) {
  for (int v = -256; v <= 256; ++v) {
    EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(static_cast<float>(v))), static_cast<float>(v)) << v;
  }
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(257.0f)), 256.0f);
  EXPECT_EQ(bfloat16ToFloat(floatToBfloat16(259.0f)), 260.0f);
}

}  // namespace
}  // namespace hoop::perf
