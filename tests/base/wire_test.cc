// Small values of the base layer: the median, secrets, the wire reader, byte sizes in settings.
#include "base/wire.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/env.h"
#include "base/error.h"
#include "base/median.h"
#include "base/secret.h"

namespace hoop {
namespace {

// The figure calibration and the schedule trial report: the middle sample, the mean of the middle
// two for an even count (not the upper one), whatever order the samples came in.
TEST(Median, IsTheMiddleSampleOrTheMeanOfTheMiddleTwo) {
  std::vector<double> odd{9, 1, 5, 300, 2};
  EXPECT_EQ(medianOf(odd), 5.0);
  std::vector<double> even{8, 1, 4, 2};
  EXPECT_EQ(medianOf(even), 3.0);
  std::vector<double> one{7};
  EXPECT_EQ(medianOf(one), 7.0);
  EXPECT_EQ(medianOf({}), 0.0);
}

TEST(Secret, HexRoundTripAndConstantTimeMatch) {
  Secret a = Secret::random();
  auto parsed = Secret::fromHex(a.toHex());
  ASSERT_TRUE(parsed.has_value());
  EXPECT_TRUE(parsed->matches(a));
  Secret b = a;
  b.bytes[15] ^= 1;
  EXPECT_FALSE(b.matches(a));
  EXPECT_FALSE(Secret::fromHex("abc").has_value());
  EXPECT_FALSE(Secret::fromHex(std::string(31, '0') + "g").has_value());
}

TEST(Wire, ReaderRejectsShortInput) {
  uint8_t bytes[3] = {1, 2, 3};
  WireReader in(bytes, sizeof(bytes), "test message");
  EXPECT_EQ(in.u16(), 0x0201);
  EXPECT_THROW(in.u32(), Error);
}

TEST(Env, ByteSizes) {
  EXPECT_EQ(parseByteSize("512K"), size_t{512} << 10);
  EXPECT_EQ(parseByteSize("4M"), size_t{4} << 20);
  EXPECT_EQ(parseByteSize("17"), size_t{17});
  EXPECT_FALSE(parseByteSize("4X").has_value());
  EXPECT_FALSE(parseByteSize("-1").has_value());
  EXPECT_FALSE(parseByteSize("").has_value());
}

}  // namespace
}  // namespace hoop
