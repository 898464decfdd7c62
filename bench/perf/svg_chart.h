// A line chart over message sizes as a standalone SVG 1.1 document: log2 x axis with size tick
// labels (8B, 1K, 1M), linear y axis from 0, one polyline per series, a legend, and each series'
// peak circled and labelled with its value. Knows nothing about hoop-perf's rows (plot_report.h
// turns those into series), so it is testable on made-up data.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/xml_escape.h"  // xmlEscape, for the chart's text

namespace hoop::perf {

struct ChartPoint {
  double bytes = 0.0;  // x; points at 0 bytes or less have no place on a log axis and are dropped
  double value = 0.0;  // y
};

struct ChartSeries {
  std::string label;
  std::vector<ChartPoint> points;  // in the order the line joins them
};

struct SizeChart {
  std::string title;
  std::string xLabel;
  std::string yLabel;
  std::string valueUnit;  // after each peak's value, as "4.65 GB/s"
  std::vector<ChartSeries> series;
};

// A byte count as its tick label: the largest of B, K, M, G, T (powers of 1024) that divides it,
// as "8B", "1K", "256K", "3M"; "1536B" when no larger unit divides it.
std::string sizeLabel(double bytes);

// The value as a peak label shows it: three significant figures without exponents.
std::string valueLabel(double value);

// The whole document, starting with the XML declaration. Every series is a
// <g class="series"> whose <title> is its label, holding its polyline, its point markers, its
// <circle class="peak"> and <text class="peak-label">; the legend repeats the labels.
std::string renderSizeChartSvg(const SizeChart& chart);

}  // namespace hoop::perf
