// The one-screen summary and the files (report.h).
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>

#include "base/error.h"
#include "report.h"

namespace hoop::validate {

namespace {

constexpr size_t kOutliersShown = 8;

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// A figure with its unit, scaled so it reads in three digits or so: bandwidth in GB/s or MB/s
// (from a shaped link's few MB/s to tens of GB/s), latency in us or ms. `scaleOf` picks the unit
// once, so a median and its MAD read in the same one.
struct Scale {
  double factor;
  const char* unit;
};

Scale scaleOf(double value, Metric metric) {
  if (higherIsBetter(metric)) return value >= 1 ? Scale{1, "GB/s"} : Scale{1000, "MB/s"};
  return value >= 1000 ? Scale{0.001, "ms"} : Scale{1, "us"};
}

std::string inScale(double value, const Scale& scale) {
  char text[32];
  const double scaled = value * scale.factor;
  std::snprintf(text, sizeof text, scaled >= 100 ? "%.0f" : scaled >= 10 ? "%.1f" : "%.2f", scaled);
  return text;
}

std::string figure(double value, Metric metric) {
  const Scale scale = scaleOf(value, metric);
  return inScale(value, scale) + ' ' + scale.unit;
}

std::string hostOfRank(const Layout& layout, int rank) {
  return layout.hostNames[static_cast<size_t>(layout.hostOf[static_cast<size_t>(rank)])];
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) fail(hoopSystemError, "cannot write ", path, ": ", std::strerror(errno));
}

}  // namespace

void printSummary(const RunRecord& run, std::ostream& out) {
  const Layout& layout = *run.layout;
  const Analysis& analysis = *run.analysis;
  size_t pairs = 0;
  for (const Measurement& m : *run.measurements) pairs += m.pass == 0 ? 1 : 0;
  out << "hoop-validate: " << layout.ranks() << " ranks on " << layout.hosts() << " hosts, "
      << run.measurements->size() << " link measurements (" << pairs << " per pass, " << run.passes
      << " pass(es)) in " << fixed(run.seconds, 1) << " s\n";
  // The cluster's figure per kind, so the outliers below read against it.
  std::vector<std::string> kinds;
  for (const Cell& cell : analysis.cells) {
    if (cell.metric == Metric::kLatencyP99) continue;
    const std::string kind =
        std::string(metricName(cell.metric)) + " " + phaseName(cell.phase) + " " + cell.transport;
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) continue;
    kinds.push_back(kind);
    const Scale scale = scaleOf(cell.clusterMedian, cell.metric);
    out << "  " << std::left << std::setw(34) << kind << " median "
        << inScale(cell.clusterMedian, scale) << ' ' << scale.unit << " (MAD "
        << inScale(cell.clusterMad, scale) << ")";
    if (cell.referenceSource == "expect") {
      out << ", expected " << figure(cell.reference, cell.metric);
    }
    if (cell.topologyCeiling > 0) {
      out << ", NIC ceiling " << figure(cell.topologyCeiling, cell.metric);
    }
    out << '\n';
  }
  for (const CollectiveOutcome& c : *run.collectives) {
    out << "  allreduce " << std::setw(5) << c.schedule << ": "
        << (c.ran ? (c.correct ? "correct" : "WRONG RESULT") : "failed") << ", "
        << fixed(c.seconds * 1e3, 2) << " ms, bus " << figure(c.busGBps, Metric::kBandwidth)
        << '\n';
    for (const std::string& step : c.bisection) out << "    bisection: " << step << '\n';
  }
  if (run.failure != nullptr) {
    for (const std::string& step : run.failure->bisection) {
      out << "  bisection of the failure: " << step << '\n';
    }
  }
  out << "outliers (" << analysis.outliers.size() << "):";
  if (analysis.outliers.empty()) out << " none";
  out << '\n';
  for (size_t i = 0; i < std::min(kOutliersShown, analysis.outliers.size()); ++i) {
    const Cell& cell = *analysis.outliers[i];
    const Scale scale = scaleOf(cell.median, cell.metric);
    out << "  " << std::setw(13) << metricName(cell.metric) << " r" << cell.from << " ("
        << hostOfRank(layout, cell.from) << ") -> r" << cell.to << " ("
        << hostOfRank(layout, cell.to) << "): " << inScale(cell.median, scale) << ' ' << scale.unit
        << " +- " << inScale(cell.mad, scale) << ", " << fixed(cell.ratio * 100, 0) << "% of "
        << cell.referenceSource << ' ' << figure(cell.reference, cell.metric) << ", cluster "
        << figure(cell.clusterMedian, cell.metric) << '\n';
  }
  if (analysis.outliers.size() > kOutliersShown) {
    out << "  ... " << analysis.outliers.size() - kOutliersShown << " more in report.json\n";
  }
  out << "blame (" << analysis.blames.size() << "):";
  if (analysis.blames.empty()) out << " none";
  out << '\n';
  for (const Blame& blame : analysis.blames) {
    out << "  " << blame.kind << ' ' << blame.what << ": " << blame.why << " [support "
        << blame.support << '/' << blame.of << "]\n";
  }
  for (const std::string& note : analysis.notes) out << "note: " << note << '\n';
  out << "hosts:\n";
  for (int h = 0; h < layout.hosts(); ++h) {
    const HostVerdict& verdict = analysis.hosts[static_cast<size_t>(h)];
    out << "  " << std::left << std::setw(16) << layout.hostNames[static_cast<size_t>(h)] << ' '
        << std::setw(9) << verdict.verdict;
    for (size_t i = 0; i < verdict.reasons.size(); ++i) {
      out << (i == 0 ? " " : "; ") << verdict.reasons[i];
    }
    out << '\n';
  }
  out << "verdict: " << analysis.verdict << " (exit " << analysis.exitCode << ")\n";
}

void writeOutputs(const RunRecord& run) {
  const std::string& dir = run.options->outDir;
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    fail(hoopSystemError, "cannot create ", dir, ": ", std::strerror(errno));
  }
  std::string lines;
  for (const Measurement& m : *run.measurements) lines += measurementLine(m, *run.layout) + '\n';
  writeFile(dir + "/measurements.jsonl", lines);
  writeFile(dir + "/report.json", reportJson(run));
  for (Metric metric : kMetrics) {
    writeFile(dir + "/heatmap-" + metricName(metric) + ".svg", heatmapSvg(run, metric));
  }
}

}  // namespace hoop::validate
