#include "sizes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace hoop::perf {
namespace {

TEST(ParseSize, PlainBytes) {
  EXPECT_EQ(parseSize("0"), 0u);
  EXPECT_EQ(parseSize("8"), 8u);
  EXPECT_EQ(parseSize("1000"), 1000u);
}

TEST(ParseSize, SuffixesArePowersOf1024InEitherCase) {
  EXPECT_EQ(parseSize("1K"), 1024u);
  EXPECT_EQ(parseSize("64k"), 65536u);
  EXPECT_EQ(parseSize("1M"), 1048576u);
  EXPECT_EQ(parseSize("32m"), 32u * 1048576u);
  EXPECT_EQ(parseSize("1G"), 1073741824u);
  EXPECT_EQ(parseSize("4g"), 4ull << 30);
}

TEST(ParseSize, RejectsMalformed) {
  for (const char* text :
       {"", "K", "-1", "+1", " 1", "1 ", "1.5M", "1KB", "1T", "0x10", "abc", "1MK"}) {
    EXPECT_FALSE(parseSize(text).has_value()) << text;
  }
}

TEST(ParseSize, RejectsOverflow) {
  EXPECT_FALSE(parseSize("99999999999999999999").has_value());
  EXPECT_FALSE(parseSize("17179869184G").has_value());  // 2^34 G = 2^64 bytes
  EXPECT_EQ(parseSize("17179869183G"), uint64_t{17179869183} << 30);
}

TEST(SizeSweep, FactorTwo) {
  EXPECT_EQ(sizeSweep(8, 128, 2, 0), (std::vector<size_t>{8, 16, 32, 64, 128}));
}

TEST(SizeSweep, FactorFourStopsAtMax) {
  // The command the brief's smoke run uses: 8 .. 1M by 4.
  EXPECT_EQ(sizeSweep(8, 1 << 20, 4, 0),
            (std::vector<size_t>{8, 32, 128, 512, 2048, 8192, 32768, 131072, 524288}));
}

TEST(SizeSweep, MaxNotOnTheLadderIsNotAdded) {
  EXPECT_EQ(sizeSweep(8, 100, 2, 0), (std::vector<size_t>{8, 16, 32, 64}));
}

TEST(SizeSweep, SingleSize) {
  EXPECT_EQ(sizeSweep(32 << 20, 32 << 20, 2, 1 << 20), (std::vector<size_t>{32 << 20}));
}

TEST(SizeSweep, FactorOneStepsByBytes) {
  EXPECT_EQ(sizeSweep(1024, 4096, 1, 1024), (std::vector<size_t>{1024, 2048, 3072, 4096}));
  EXPECT_EQ(sizeSweep(0, 10, 1, 4), (std::vector<size_t>{0, 4, 8}));
}

TEST(SizeSweep, StepsThatDoNotGrowGiveOneSize) {
  EXPECT_EQ(sizeSweep(0, 64, 2, 0), (std::vector<size_t>{0}));
  EXPECT_EQ(sizeSweep(8, 64, 1, 0), (std::vector<size_t>{8}));
}

TEST(SizeSweep, StopsBeforeOverflow) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  const std::vector<size_t> sizes = sizeSweep(size_t{1} << 62, kMax, 2, 0);
  EXPECT_EQ(sizes, (std::vector<size_t>{size_t{1} << 62, size_t{1} << 63}));
  EXPECT_EQ(sizeSweep(kMax - 1, kMax, 1, 4), (std::vector<size_t>{kMax - 1}));
}

}  // namespace
}  // namespace hoop::perf
