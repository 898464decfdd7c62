// hoop-validate's outputs, all written by rank 0: one JSON line per measurement, the JSON report
// (matrices per metric, references, outliers, blame, verdicts), an SVG heatmap per metric, and
// the one-screen summary. docs/validate-report.schema.json and docs/validate-line.schema.json
// describe the JSON.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis.h"
#include "measure.h"
#include "options.h"
#include "plan.h"

namespace hoop::validate {

struct RunRecord {
  const Options* options = nullptr;
  const Layout* layout = nullptr;
  const std::vector<RankNic>* nics = nullptr;
  const std::vector<Measurement>* measurements = nullptr;
  const std::vector<CollectiveOutcome>* collectives = nullptr;
  const RunFailure* failure = nullptr;
  const Analysis* analysis = nullptr;
  int passes = 0;
  double seconds = 0;
};

// One line of JSON for a measurement (no line break).
std::string measurementLine(const Measurement& m, const Layout& layout);
std::string reportJson(const RunRecord& run);
// The heatmap of one metric: a rank x rank grid, each measured cell a <rect class="cell">,
// coloured by its ratio to its reference, slow cells outlined and crossed.
std::string heatmapSvg(const RunRecord& run, Metric metric);
void printSummary(const RunRecord& run, std::ostream& out);
// Writes measurements.jsonl, report.json and heatmap-<metric>.svg into options->outDir.
void writeOutputs(const RunRecord& run);

}  // namespace hoop::validate
