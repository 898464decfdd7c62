// hoop-perf's --plot output: the rows' out-of-place bus bandwidth against size, one series per
// collective, schedule, transport, type and op in the run, drawn by svg_chart.h.
#pragma once

#include <string>
#include <vector>

#include "results.h"
#include "svg_chart.h"

namespace hoop::perf {

// "allreduce ring tcp float sum"; collectives that only move data leave the op out.
std::string seriesLabel(const RowResult& row);

// Series in the order their first row ran; each series' points in row order.
SizeChart busBandwidthChart(const std::string& title, const std::vector<RowResult>& rows);

}  // namespace hoop::perf
