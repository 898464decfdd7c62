#include "table.h"

#include <gtest/gtest.h>

#include <string>

namespace hoop::perf {
namespace {

TEST(Table, ColumnHeaderIsNcclTests) {
  const std::string expected =
      "#                                                              out-of-place                "
      "       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong  schedule\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n";
  EXPECT_EQ(tableColumnHeader(), expected);
}

TEST(Table, RowMatchesNcclTests) {
  const std::string row = rowPrefix(8, 2, "float", "sum", -1) +
                          placementColumns(17.31, 0.0, 0.0, 0) +
                          placementColumns(17.02, 0.0, 0.0, 0);
  EXPECT_EQ(row,
            "           8             2     float     sum      -1    17.31    0.00    0.00      0"
            "    17.02    0.00    0.00      0");
}

TEST(Table, RowWithRootTypeNameAndBandwidth) {
  const std::string row = rowPrefix(33554432, 16777216, "bfloat16", "none", 3) +
                          placementColumns(2817.5, 11.9093, 11.9093, 0) +
                          placementColumns(12345.6, 2.71796, 2.71796, 12);
  EXPECT_EQ(row,
            "    33554432      16777216  bfloat16    none       3   2817.5   11.91   11.91      0"
            "    12346    2.72    2.72     12");
}

TEST(Table, RowsEndInTheScheduleThatRan) {
  const std::string row = rowPrefix(8, 2, "float", "sum", -1) +
                          placementColumns(17.31, 0.0, 0.0, 0) +
                          placementColumns(17.02, 0.0, 0.0, 0) + scheduleColumn("oneshot");
  EXPECT_EQ(row,
            "           8             2     float     sum      -1    17.31    0.00    0.00      0"
            "    17.02    0.00    0.00      0  oneshot");
}

TEST(Table, UncheckedRowsSayNA) {
  EXPECT_EQ(placementColumns(5.0, 1.5, 0.75, std::nullopt), "     5.00    1.50    0.75    N/A");
}

TEST(Table, TimePrecisionShrinksAsTimeGrows) {
  EXPECT_EQ(formatTimeUs(0.0), "   0.00");
  EXPECT_EQ(formatTimeUs(99.994), "  99.99");
  EXPECT_EQ(formatTimeUs(100.0), "  100.0");
  EXPECT_EQ(formatTimeUs(9999.94), " 9999.9");
  EXPECT_EQ(formatTimeUs(10000.0), "  10000");
  EXPECT_EQ(formatTimeUs(1234567.4), "1234567");
}

TEST(Table, BandwidthIsDecimalGigabytesPerSecond) {
  EXPECT_DOUBLE_EQ(bandwidthGBs(1'000'000'000, 1'000'000.0), 1.0);
  EXPECT_DOUBLE_EQ(bandwidthGBs(1 << 20, 100.0), 10.48576);
  EXPECT_DOUBLE_EQ(bandwidthGBs(8, 0.0), 0.0);
}

TEST(Table, Footer) {
  EXPECT_EQ(tableFooter(0, 1.2345),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.2345 \n#\n");
  EXPECT_EQ(tableFooter(7, 0.0),
            "# Out of bounds values : 7 FAILED\n# Avg bus bandwidth    : 0 \n#\n");
}

}  // namespace
}  // namespace hoop::perf
