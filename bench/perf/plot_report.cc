#include "plot_report.h"

#include <algorithm>

namespace hoop::perf {

std::string seriesLabel(const RowResult& row) {
  std::string label = std::string(collectiveName(row.collective)) + " " + row.algorithm + " " +
                      row.transport + " " + row.type;
  if (collectiveReduces(row.collective)) label += " " + row.redop;
  return label;
}

SizeChart busBandwidthChart(const std::string& title, const std::vector<RowResult>& rows) {
  SizeChart chart;
  chart.title = title;
  chart.xLabel = "Message size (bytes, log2 scale)";
  chart.yLabel = "Bus bandwidth, out-of-place (GB/s)";
  chart.valueUnit = "GB/s";
  for (const RowResult& row : rows) {
    const std::string label = seriesLabel(row);
    auto series = std::find_if(chart.series.begin(), chart.series.end(),
                               [&](const ChartSeries& s) { return s.label == label; });
    if (series == chart.series.end()) {
      chart.series.push_back({label, {}});
      series = chart.series.end() - 1;
    }
    series->points.push_back({static_cast<double>(row.bytes), row.outOfPlace.busBwGBs});
  }
  return chart;
}

}  // namespace hoop::perf
