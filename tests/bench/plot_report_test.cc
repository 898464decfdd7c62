#include "plot_report.h"

#include <gtest/gtest.h>

#include "report_rows.h"

namespace hoop::perf {
namespace {

using testing::row;

TEST(PlotReport, SeriesLabelNamesWhatDiffers) {
  EXPECT_EQ(seriesLabel(row("ring", 8, 1.0)), "allreduce ring tcp float sum");
  RowResult gather = row("ring", 8, 1.0);
  gather.collective = Collective::kAllGather;
  gather.redop = "none";
  EXPECT_EQ(seriesLabel(gather), "allgather ring tcp float");
}

TEST(PlotReport, OneSeriesPerAlgorithmTypeAndOp) {
  std::vector<RowResult> rows;
  for (const char* algorithm : {"ring", "direct"}) {
    for (size_t bytes : {8, 64, 512}) rows.push_back(row(algorithm, bytes, bytes / 8.0));
  }
  RowResult half = row("direct", 8, 9.0);
  half.type = "half";
  rows.push_back(half);
  RowResult maxOp = row("direct", 8, 9.0);
  maxOp.redop = "max";
  rows.push_back(maxOp);

  const SizeChart chart = busBandwidthChart("title", rows);
  EXPECT_EQ(chart.title, "title");
  EXPECT_NE(chart.yLabel.find("GB/s"), std::string::npos);
  EXPECT_NE(chart.xLabel.find("bytes"), std::string::npos);
  ASSERT_EQ(chart.series.size(), 4u);
  EXPECT_EQ(chart.series[0].label, "allreduce ring tcp float sum");
  EXPECT_EQ(chart.series[1].label, "allreduce direct tcp float sum");
  EXPECT_EQ(chart.series[2].label, "allreduce direct tcp half sum");
  EXPECT_EQ(chart.series[3].label, "allreduce direct tcp float max");
  ASSERT_EQ(chart.series[0].points.size(), 3u);
  // Out-of-place bus bandwidth against the table's size.
  EXPECT_DOUBLE_EQ(chart.series[0].points[2].bytes, 512.0);
  EXPECT_DOUBLE_EQ(chart.series[0].points[2].value, 64.0);
}

}  // namespace
}  // namespace hoop::perf
