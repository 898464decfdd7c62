#include "svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace hoop::perf {
namespace {

// Geometry, in SVG user units (pixels at 100%). The legend sits right of the plot so any number
// of series fits: the document grows downwards instead of covering the lines.
constexpr double kPlotLeft = 80.0;
constexpr double kPlotTop = 50.0;
constexpr double kPlotWidth = 640.0;
constexpr double kPlotHeight = 380.0;
constexpr double kLegendLeft = kPlotLeft + kPlotWidth + 30.0;
constexpr double kLegendWidth = 330.0;
constexpr double kLegendRowHeight = 34.0;  // two lines: the label, then its peak
constexpr double kWidth = kLegendLeft + kLegendWidth;
// At most this many labelled x ticks; beyond it every second (third, ...) power of two is labelled.
constexpr int kMaxXLabels = 16;

// Tableau 10: distinguishable colours; after ten series the dash pattern tells them apart.
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kDashes[] = {"", "6,3", "2,2", "8,3,2,3"};
constexpr size_t kColorCount = sizeof(kColors) / sizeof(kColors[0]);
constexpr size_t kDashCount = sizeof(kDashes) / sizeof(kDashes[0]);

[[gnu::format(printf, 2, 3)]] void appendf(std::string& out, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  if (length > 0) {
    const size_t at = out.size();
    out.resize(at + static_cast<size_t>(length) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(length) + 1, fmt, args);
    out.resize(at + static_cast<size_t>(length));
  }
  va_end(args);
}

// The axes' ranges: x in powers of two (log2 of bytes), y from 0 to a round number.
struct Scale {
  int minExp = 0;
  int maxExp = 10;
  double yMax = 1.0;
  double yStep = 0.2;

  double x(double bytes) const {
    return kPlotLeft + (std::log2(bytes) - minExp) / (maxExp - minExp) * kPlotWidth;
  }
  double y(double value) const { return kPlotTop + kPlotHeight * (1.0 - value / yMax); }
};

// 1, 2 or 5 times a power of ten: the step that gives about five y ticks up to maxValue.
double niceStep(double maxValue) {
  const double raw = maxValue / 5.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double normalized = raw / magnitude;
  const double factor = normalized <= 1.0   ? 1.0
                        : normalized <= 2.0 ? 2.0
                        : normalized <= 5.0 ? 5.0
                                            : 10.0;
  return factor * magnitude;
}

Scale scaleFor(const std::vector<ChartSeries>& series) {
  double minBytes = 0.0;
  double maxBytes = 0.0;
  double maxValue = 0.0;
  for (const ChartSeries& s : series) {
    for (const ChartPoint& p : s.points) {
      if (p.bytes <= 0.0) continue;
      minBytes = minBytes == 0.0 ? p.bytes : std::min(minBytes, p.bytes);
      maxBytes = std::max(maxBytes, p.bytes);
      if (std::isfinite(p.value)) maxValue = std::max(maxValue, p.value);
    }
  }
  Scale scale;
  if (maxBytes > 0.0) {
    scale.minExp = static_cast<int>(std::floor(std::log2(minBytes)));
    scale.maxExp = static_cast<int>(std::ceil(std::log2(maxBytes)));
    if (scale.minExp == scale.maxExp) {  // one size: centre it
      --scale.minExp;
      ++scale.maxExp;
    }
  }
  if (maxValue > 0.0) {
    scale.yStep = niceStep(maxValue);
    scale.yMax = std::ceil(maxValue / scale.yStep) * scale.yStep;
    // Headroom so the highest peak's label stays inside the plot.
    if (maxValue > 0.92 * scale.yMax) scale.yMax += scale.yStep;
  }
  return scale;
}

// A tick value without float noise: 0.30000000000000004 shows as 0.3.
std::string tickLabel(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.6g", value);
  return text;
}

void drawAxes(std::string& svg, const SizeChart& chart, const Scale& scale) {
  const double bottom = kPlotTop + kPlotHeight;
  const double right = kPlotLeft + kPlotWidth;
  svg += "<g class=\"grid\" stroke=\"#dddddd\" stroke-width=\"1\">\n";
  const int yTicks = static_cast<int>(std::lround(scale.yMax / scale.yStep));
  for (int i = 1; i <= yTicks; ++i) {
    const double y = scale.y(i * scale.yStep);
    appendf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kPlotLeft, y, right,
            y);
  }
  svg += "</g>\n";

  svg += "<g class=\"axes\" stroke=\"#333333\" stroke-width=\"1\">\n";
  appendf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kPlotLeft, bottom,
          right, bottom);
  appendf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kPlotLeft, kPlotTop,
          kPlotLeft, bottom);
  svg += "</g>\n";

  const int exponents = scale.maxExp - scale.minExp + 1;
  const int labelEvery = (exponents + kMaxXLabels - 1) / kMaxXLabels;
  svg += "<g class=\"x-ticks\" text-anchor=\"middle\">\n";
  for (int e = scale.minExp; e <= scale.maxExp; ++e) {
    const double x = scale.x(std::ldexp(1.0, e));
    // Labelled ticks at multiples of labelEvery, so 1K, 1M and 1G stay labelled when thinned.
    const bool labelled = e % labelEvery == 0;
    appendf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n", x,
            bottom, x, bottom + (labelled ? 6.0 : 3.0));
    if (labelled) {
      appendf(svg, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, bottom + 20.0,
              xmlEscape(sizeLabel(std::ldexp(1.0, e))).c_str());
    }
  }
  svg += "</g>\n";

  svg += "<g class=\"y-ticks\" text-anchor=\"end\">\n";
  for (int i = 0; i <= yTicks; ++i) {
    const double y = scale.y(i * scale.yStep);
    appendf(svg, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
            kPlotLeft - 6.0, y, kPlotLeft, y);
    appendf(svg, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", kPlotLeft - 9.0, y + 4.0,
            tickLabel(i * scale.yStep).c_str());
  }
  svg += "</g>\n";

  appendf(svg, "<text class=\"x-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
          kPlotLeft + kPlotWidth / 2.0, bottom + 45.0, xmlEscape(chart.xLabel).c_str());
  appendf(svg,
          "<text class=\"y-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
          "transform=\"rotate(-90 %.1f %.1f)\">%s</text>\n",
          kPlotLeft - 55.0, kPlotTop + kPlotHeight / 2.0, kPlotLeft - 55.0,
          kPlotTop + kPlotHeight / 2.0, xmlEscape(chart.yLabel).c_str());
  appendf(svg,
          "<text class=\"title\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"15\" "
          "font-weight=\"bold\">%s</text>\n",
          kPlotLeft + kPlotWidth / 2.0, kPlotTop - 22.0, xmlEscape(chart.title).c_str());
}

// The points a series can draw: positive size, finite value.
std::vector<ChartPoint> drawablePoints(const ChartSeries& series) {
  std::vector<ChartPoint> points;
  for (const ChartPoint& p : series.points) {
    if (p.bytes > 0.0 && std::isfinite(p.value)) points.push_back(p);
  }
  return points;
}

// The first of the highest points (points is not empty), so a flat top is marked where it is
// first reached.
ChartPoint peakOf(const std::vector<ChartPoint>& points) {
  return *std::max_element(
      points.begin(), points.end(),
      [](const ChartPoint& a, const ChartPoint& b) { return a.value < b.value; });
}

std::string peakText(const ChartPoint& peak, const std::string& unit) {
  return valueLabel(peak.value) + (unit.empty() ? "" : " " + unit);
}

void drawSeries(std::string& svg, const ChartSeries& series, size_t index, const Scale& scale,
                const std::string& unit) {
  const char* color = kColors[index % kColorCount];
  const char* dash = kDashes[(index / kColorCount) % kDashCount];
  appendf(svg, "<g class=\"series\" id=\"series-%zu\">\n<title>%s</title>\n", index,
          xmlEscape(series.label).c_str());
  const std::vector<ChartPoint> points = drawablePoints(series);
  if (!points.empty()) {
    appendf(svg, "<polyline class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"", color);
    if (dash[0] != '\0') appendf(svg, " stroke-dasharray=\"%s\"", dash);
    svg += " points=\"";
    for (size_t i = 0; i < points.size(); ++i) {
      appendf(svg, "%s%.1f,%.1f", i == 0 ? "" : " ", scale.x(points[i].bytes),
              scale.y(points[i].value));
    }
    svg += "\"/>\n";
    for (const ChartPoint& p : points) {
      appendf(svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", scale.x(p.bytes),
              scale.y(p.value), color);
    }
    const ChartPoint peak = peakOf(points);
    const double px = scale.x(peak.bytes);
    const double py = scale.y(peak.value);
    appendf(svg,
            "<circle class=\"peak\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"2\"/>\n",
            px, py, color);
    // Anchored so the label stays inside the plot at either end of the x axis.
    const char* anchor = px > kPlotLeft + kPlotWidth - 60.0 ? "end"
                         : px < kPlotLeft + 60.0            ? "start"
                                                            : "middle";
    // A white-outlined copy underneath keeps the label readable where lines cross it (SVG 1.1
    // has no paint-order, so the halo is its own element).
    const std::string label = xmlEscape(peakText(peak, unit));
    for (const bool halo : {true, false}) {
      appendf(svg,
              "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"%s\" "
              "font-weight=\"bold\"%s>%s</text>\n",
              halo ? "peak-halo" : "peak-label", px, py - 10.0, anchor, halo ? "white" : color,
              halo ? " stroke=\"white\" stroke-width=\"4\" stroke-linejoin=\"round\"" : "",
              label.c_str());
    }
  }
  svg += "</g>\n";
}

void drawLegend(std::string& svg, const SizeChart& chart) {
  svg += "<g class=\"legend\">\n";
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& series = chart.series[i];
    const double y = kPlotTop + kLegendRowHeight * static_cast<double>(i);
    const char* color = kColors[i % kColorCount];
    const char* dash = kDashes[(i / kColorCount) % kDashCount];
    appendf(svg,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"2\"",
            kLegendLeft, y, kLegendLeft + 24.0, y, color);
    if (dash[0] != '\0') appendf(svg, " stroke-dasharray=\"%s\"", dash);
    svg += "/>\n";
    appendf(svg, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", kLegendLeft + 30.0, y + 4.0,
            xmlEscape(series.label).c_str());
    const std::vector<ChartPoint> points = drawablePoints(series);
    const std::string peak = points.empty() ? std::string("no points")
                                            : "peak " + peakText(peakOf(points), chart.valueUnit) +
                                                  " at " + sizeLabel(peakOf(points).bytes);
    appendf(svg, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555555\">%s</text>\n",
            kLegendLeft + 30.0, y + 18.0, xmlEscape(peak).c_str());
  }
  svg += "</g>\n";
}

}  // namespace

std::string sizeLabel(double bytes) {
  static constexpr const char* kUnits[] = {"B", "K", "M", "G", "T"};
  if (!(bytes >= 1.0) || bytes != std::floor(bytes)) return tickLabel(bytes) + "B";
  size_t unit = 0;
  while (unit + 1 < sizeof(kUnits) / sizeof(kUnits[0]) && std::fmod(bytes, 1024.0) == 0.0) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[48];
  std::snprintf(text, sizeof(text), "%.0f%s", bytes, kUnits[unit]);
  return text;
}

std::string valueLabel(double value) {
  char text[48];
  if (std::fabs(value) >= 100.0) {
    std::snprintf(text, sizeof(text), "%.0f", value);
  } else if (std::fabs(value) >= 10.0) {
    std::snprintf(text, sizeof(text), "%.1f", value);
  } else if (std::fabs(value) >= 1.0 || value == 0.0) {
    std::snprintf(text, sizeof(text), "%.2f", value);
  } else {
    std::snprintf(text, sizeof(text), "%.3g", value);
  }
  return text;
}

std::string renderSizeChartSvg(const SizeChart& chart) {
  const Scale scale = scaleFor(chart.series);
  const double legendBottom =
      kPlotTop + kLegendRowHeight * static_cast<double>(chart.series.size()) + 20.0;
  const double height = std::max(kPlotTop + kPlotHeight + 70.0, legendBottom);
  std::string svg = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  appendf(svg,
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
          "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
          "font-size=\"12\">\n",
          kWidth, height, kWidth, height);
  appendf(svg, "<title>%s</title>\n", xmlEscape(chart.title).c_str());
  svg += "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  drawAxes(svg, chart, scale);
  for (size_t i = 0; i < chart.series.size(); ++i) {
    drawSeries(svg, chart.series[i], i, scale, chart.valueUnit);
  }
  drawLegend(svg, chart);
  const bool anyPoint =
      std::any_of(chart.series.begin(), chart.series.end(),
                  [](const ChartSeries& s) { return !drawablePoints(s).empty(); });
  if (!anyPoint) {
    appendf(svg, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">no data</text>\n",
            kPlotLeft + kPlotWidth / 2.0, kPlotTop + kPlotHeight / 2.0);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hoop::perf
