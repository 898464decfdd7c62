// The heatmaps (report.h): plain SVG with no script, so any browser or image viewer shows it.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/error.h"
#include "base/xml_escape.h"
#include "report.h"

namespace hoop::validate {

namespace {

// Green at the reference or better, red at the slow threshold or worse, yellow between.
std::string colourFor(double ratio, double slowFraction) {
  const double t = std::clamp((ratio - slowFraction) / (1 - slowFraction), 0.0, 1.0);
  const int red = t < 0.5 ? 220 : static_cast<int>(220 - (t - 0.5) * 2 * 170);
  const int green = t < 0.5 ? static_cast<int>(60 + t * 2 * 140) : 200;
  char text[16];
  std::snprintf(text, sizeof text, "#%02x%02x50", red, green);
  return text;
}

std::string figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.3g", value);
  return text;
}

}  // namespace

std::string heatmapSvg(const RunRecord& run, Metric metric) {
  const Layout& layout = *run.layout;
  const int n = layout.ranks();
  const int cell = std::clamp(640 / std::max(1, n), 8, 40);
  const int margin = 110;
  const int width = margin + n * cell + 20;
  const int height = margin + n * cell + 60;
  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"10\" y=\"20\" font-size=\"14\">hoop-validate: " << metricName(metric) << " ("
      << metricUnit(metric) << (metric == Metric::kBandwidth ? ", row sends to column" : "")
      << "), verdict " << run.analysis->verdict << "</text>\n"
      << "<text x=\"10\" y=\"38\" font-size=\"11\">green: at its reference; red: below "
      << run.options->slowFraction
      << " of it; outlined with a cross: slow; grey: not measured</text>\n";
  // Axes: rank numbers, and a band per host.
  for (int r = 0; r < n; ++r) {
    const int at = margin + r * cell;
    svg << "<text class=\"label\" x=\"" << margin - 4 << "\" y=\"" << at + cell / 2 + 4
        << "\" font-size=\"10\" text-anchor=\"end\">"
        << xmlEscape(layout.hostNames[static_cast<size_t>(layout.hostOf[static_cast<size_t>(r)])])
        << " r" << r << "</text>\n";
    svg << "<text class=\"label\" x=\"" << at + cell / 2 << "\" y=\"" << margin - 6
        << "\" font-size=\"10\" text-anchor=\"middle\">" << r << "</text>\n";
  }
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) {
      svg << "<rect class=\"empty\" x=\"" << margin + c * cell << "\" y=\"" << margin + r * cell
          << "\" width=\"" << cell << "\" height=\"" << cell << "\" fill=\""
          << (r == c ? "#ffffff" : "#dddddd") << "\" stroke=\"#ffffff\"/>\n";
    }
  }
  for (const Cell& data : run.analysis->cells) {
    if (data.metric != metric) continue;
    std::vector<std::pair<int, int>> places = {{data.from, data.to}};
    if (metric != Metric::kBandwidth) places.emplace_back(data.to, data.from);
    for (auto [row, column] : places) {
      const int x = margin + column * cell;
      const int y = margin + row * cell;
      svg << "<rect class=\"cell" << (data.slow ? " slow" : "") << "\" data-from=\"" << row
          << "\" data-to=\"" << column << "\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << cell
          << "\" height=\"" << cell << "\" fill=\""
          << colourFor(data.ratio, run.options->slowFraction) << "\" stroke=\""
          << (data.slow ? "#000000" : "#ffffff") << "\" stroke-width=\"" << (data.slow ? 2 : 1)
          << "\"><title>rank " << row << " - rank " << column << ": " << figure(data.median) << ' '
          << metricUnit(metric) << ", " << figure(data.ratio * 100) << "% of "
          << data.referenceSource << ' ' << figure(data.reference) << "</title></rect>\n";
      if (data.slow) {
        svg << "<path class=\"slow-mark\" d=\"M" << x + 3 << ' ' << y + 3 << " L" << x + cell - 3
            << ' ' << y + cell - 3 << " M" << x + cell - 3 << ' ' << y + 3 << " L" << x + 3 << ' '
            << y + cell - 3 << "\" stroke=\"#000000\" stroke-width=\"1.5\"/>\n";
      }
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace hoop::validate
