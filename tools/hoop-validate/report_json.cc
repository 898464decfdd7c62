// The JSON outputs: a line per measurement and the report (report.h).
#include <cmath>

#include "base/error.h"
#include "base/json_writer.h"
#include "report.h"

namespace hoop::validate {

namespace {

const char* modeName(Mode mode) {
  switch (mode) {
    case Mode::kQuick: return "quick";
    case Mode::kDefault: return "default";
    case Mode::kBurnIn: return "burn-in";
  }
  return "?";
}

// A data check as one line of JSON.
std::string checkText(const PatternCheck& check) {
  if (check.ok) return "{\"ok\": true}";
  return str("{\"ok\": false, \"message\": ", check.message, ", \"offset\": ", check.offset,
             ", \"expected\": ", static_cast<int>(check.expected),
             ", \"actual\": ", static_cast<int>(check.actual), "}");
}

// The matrix of one metric: values[from][to], null where not measured.
void writeMatrix(JsonWriter& json, const RunRecord& run, Metric metric) {
  const size_t n = static_cast<size_t>(run.layout->ranks());
  std::vector<std::vector<const Cell*>> grid(n, std::vector<const Cell*>(n, nullptr));
  for (const Cell& cell : run.analysis->cells) {
    if (cell.metric != metric) continue;
    grid[static_cast<size_t>(cell.from)][static_cast<size_t>(cell.to)] = &cell;
    if (metric != Metric::kBandwidth)
      grid[static_cast<size_t>(cell.to)][static_cast<size_t>(cell.from)] = &cell;
  }
  json.beginObject();
  json.key("unit").string(metricUnit(metric));
  json.key("higher_is_better").boolean(higherIsBetter(metric));
  for (const char* part : {"values", "slow"}) {
    json.key(part).beginArray();
    for (size_t i = 0; i < n; ++i) {
      json.beginArray(true);
      for (size_t j = 0; j < n; ++j) {
        const Cell* cell = grid[i][j];
        if (cell == nullptr) {
          json.null();
        } else if (part[0] == 'v') {
          json.number(cell->median);
        } else {
          json.boolean(cell->slow);
        }
      }
      json.endArray();
    }
    json.endArray();
  }
  json.endObject();
}

void writeCell(JsonWriter& json, const Cell& cell) {
  json.beginObject();
  json.key("metric").string(metricName(cell.metric));
  json.key("from").integer(cell.from);
  json.key("to").integer(cell.to);
  json.key("phase").string(phaseName(cell.phase));
  json.key("transport").string(cell.transport);
  json.key("median").number(cell.median);
  json.key("mad").number(cell.mad);
  json.key("spread").number(cell.spread);
  json.key("samples").integer(static_cast<int64_t>(cell.samples.size()));
  json.key("bimodal").boolean(cell.bimodal);
  json.key("reference").number(cell.reference);
  json.key("reference_source").string(cell.referenceSource);
  json.key("cluster_median").number(cell.clusterMedian);
  json.key("cluster_mad").number(cell.clusterMad);
  json.key("topology_ceiling").number(cell.topologyCeiling);
  json.key("ratio").number(cell.ratio);
  json.key("slow").boolean(cell.slow);
  json.endObject();
}

}  // namespace

std::string measurementLine(const Measurement& m, const Layout& layout) {
  auto hostOf = [&](int rank) {
    return jsonString(
        layout.hostNames[static_cast<size_t>(layout.hostOf[static_cast<size_t>(rank)])]);
  };
  return str("{\"pass\": ", m.pass, ", \"confirmation\": ", m.confirmation ? "true" : "false",
             ", \"phase\": ", jsonString(phaseName(m.phase)), ", \"round\": ", m.round,
             ", \"a\": ", m.a, ", \"b\": ", m.b, ", \"host_a\": ", hostOf(m.a),
             ", \"host_b\": ", hostOf(m.b), ", \"transport\": ", jsonString(m.transport),
             ", \"bandwidth_a_to_b_GBps\": ", jsonNumber(m.figures.lowerToHigherGBps),
             ", \"bandwidth_b_to_a_GBps\": ", jsonNumber(m.figures.higherToLowerGBps),
             ", \"bidirectional_GBps\": ", jsonNumber(m.figures.bidirectionalGBps),
             ", \"latency_p50_us\": ", jsonNumber(m.figures.latencyP50Us),
             ", \"latency_p99_us\": ", jsonNumber(m.figures.latencyP99Us),
             ", \"data_at_a\": ", checkText(m.atA), ", \"data_at_b\": ", checkText(m.atB), "}");
}

std::string reportJson(const RunRecord& run) {
  const Layout& layout = *run.layout;
  const Analysis& analysis = *run.analysis;
  JsonWriter json;
  json.beginObject();
  json.key("tool").string("hoop-validate");
  json.key("format").integer(1);
  json.key("mode").string(modeName(run.options->mode));
  json.key("passes").integer(run.passes);
  json.key("seconds").number(run.seconds);
  json.key("ranks").integer(layout.ranks());
  json.key("verdict").string(analysis.verdict);
  json.key("exit_code").integer(analysis.exitCode);
  json.key("hosts").beginArray();
  for (int h = 0; h < layout.hosts(); ++h) {
    const HostVerdict& verdict = analysis.hosts[static_cast<size_t>(h)];
    json.beginObject();
    json.key("index").integer(h);
    json.key("name").string(layout.hostNames[static_cast<size_t>(h)]);
    json.key("ranks").beginArray(true);
    for (int rank : layout.hostRanks[static_cast<size_t>(h)]) json.integer(rank);
    json.endArray();
    json.key("nics").beginArray(true);
    for (int rank : layout.hostRanks[static_cast<size_t>(h)]) {
      json.string((*run.nics)[static_cast<size_t>(rank)].name);
    }
    json.endArray();
    json.key("verdict").string(verdict.verdict);
    json.key("reasons").beginArray();
    for (const std::string& reason : verdict.reasons) json.string(reason);
    json.endArray();
    json.endObject();
  }
  json.endArray();
  json.key("matrices").beginObject();
  for (Metric metric : kMetrics) {
    json.key(metricName(metric));
    writeMatrix(json, run, metric);
  }
  json.endObject();
  json.key("outliers").beginArray();
  for (const Cell* cell : analysis.outliers) writeCell(json, *cell);
  json.endArray();
  json.key("blames").beginArray();
  for (const Blame& blame : analysis.blames) {
    json.beginObject();
    json.key("kind").string(blame.kind);
    json.key("what").string(blame.what);
    json.key("why").string(blame.why);
    json.key("support").integer(blame.support);
    json.key("of").integer(blame.of);
    json.key("failed").boolean(blame.failed);
    json.key("hosts").beginArray(true);
    for (int host : blame.hosts) json.integer(host);
    json.endArray();
    json.endObject();
  }
  json.endArray();
  json.key("collectives").beginArray();
  for (const CollectiveOutcome& c : *run.collectives) {
    json.beginObject();
    json.key("collective").string("allreduce");
    json.key("schedule").string(c.schedule);
    json.key("ran").boolean(c.ran);
    json.key("correct").boolean(c.correct);
    json.key("seconds").number(c.seconds);
    json.key("bus_GBps").number(c.busGBps);
    json.key("bisection").beginArray();
    for (const std::string& step : c.bisection) json.string(step);
    json.endArray();
    json.key("blamed_host").integer(c.blamedHost);
    json.endObject();
  }
  json.endArray();
  json.key("notes").beginArray();
  for (const std::string& note : analysis.notes) json.string(note);
  json.endArray();
  json.key("failure");
  if (run.failure == nullptr) {
    json.null();
  } else {
    json.beginObject();
    json.key("where").string(run.failure->where);
    json.key("message").string(run.failure->message);
    json.key("ranks_named").beginArray(true);
    for (int rank : run.failure->ranksNamed) json.integer(rank);
    json.endArray();
    json.key("bisection").beginArray();
    for (const std::string& step : run.failure->bisection) json.string(step);
    json.endArray();
    json.key("blamed_host").integer(run.failure->blamedHost);
    json.endObject();
  }
  json.key("cells").beginArray();
  for (const Cell& cell : analysis.cells) writeCell(json, cell);
  json.endArray();
  json.endObject();
  return json.text();
}

}  // namespace hoop::validate
