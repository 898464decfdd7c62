// HangReportScanner: hooprun finds hoop's hang report in a rank's output however the bytes are
// split, keeps the first one, and cannot be made to buffer without bound.
#include <gtest/gtest.h>

#include <string>

#include "hooprun/hang_report_scanner.h"

namespace hoop::run {
namespace {

const std::string kOutput =
    "LOOP rank 0 pid 12\n"
    "vm:12:0 hoop WARN INIT rank 0: allreduce #7 (4 x float) timed out after 2 s waiting for x\n"
    "hoop hang report from rank 0 (3 ranks, 2 answered, HOOP_TIMEOUT 2 s):\n"
    "  allreduce #7 (4 x float): ranks 0-1 waiting; last completed allreduce #6 (4 x float)\n"
    "  rank 2 (host vm, pid 14): no answer (stopped, busy outside hoop, or unreachable)\n"
    "FAIL rank 0: allreduce: operation timed out: rank 0: ...\n"
    "hoop hang report from rank 0 (a second copy, ignored):\n"
    "  ignored\n";

TEST(HooprunHangReport, FindsTheFirstReportInAnySplit) {
  for (size_t piece : {size_t{1}, size_t{7}, kOutput.size()}) {
    HangReportScanner scanner;
    for (size_t at = 0; at < kOutput.size(); at += piece) scanner.feed(kOutput.substr(at, piece));
    ASSERT_EQ(scanner.lines().size(), 3u) << "piece " << piece;
    EXPECT_EQ(scanner.lines()[0],
              "hoop hang report from rank 0 (3 ranks, 2 answered, HOOP_TIMEOUT 2 s):");
    EXPECT_EQ(scanner.lines()[2],
              "  rank 2 (host vm, pid 14): no answer (stopped, busy outside hoop, or unreachable)");
  }
}

TEST(HooprunHangReport, TakesTheTitleFromWithinALogLine) {
  HangReportScanner scanner;
  scanner.feed("vm:1:0 hoop ERROR COLL hoop hang report from rank 0 (2 ranks):\n  a\nnext\n");
  ASSERT_EQ(scanner.lines().size(), 2u);
  EXPECT_EQ(scanner.lines()[0], "hoop hang report from rank 0 (2 ranks):");
}

TEST(HooprunHangReport, NothingWithoutAReportAndBoundedWithOne) {
  HangReportScanner quiet;
  quiet.feed("OK rank 0 of 2\n  indented but no report\n");
  EXPECT_TRUE(quiet.lines().empty());

  HangReportScanner flood;
  flood.feed("hoop hang report:\n");
  for (int i = 0; i < 100; ++i) flood.feed("  line\n");
  flood.feed(std::string(1 << 20, 'x'));  // a line that never ends
  EXPECT_EQ(flood.lines().size(), HangReportScanner::kMaxLines);
}

}  // namespace
}  // namespace hoop::run
