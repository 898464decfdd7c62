#include "csv_report.h"

#include "base/json_writer.h"

namespace hoop::perf {
namespace {

constexpr std::string_view kRowColumns[] = {"collective", "algorithm",  "transport",
                                            "memory",     "size_bytes", "count",
                                            "type",       "redop",      "root"};
// Each placement's columns, after its prefix "oop_" (out-of-place) or "ip_" (in-place).
constexpr std::string_view kPlacementColumns[] = {"time_us",   "algbw_gbs", "busbw_gbs", "wrong",
                                                  "median_us", "p99_us",    "min_us",    "max_us"};

// Numbers as the JSON writes them (the shortest text that reads back as the same double), but an
// empty field where the JSON has null.
std::string csvNumber(double value) {
  std::string text = jsonNumber(value);
  return text == "null" ? "" : text;
}

void appendPlacement(std::string& line, const PlacementResult& p) {
  for (double value : {p.timeUs, p.algBwGBs, p.busBwGBs}) line += "," + csvNumber(value);
  line += ",";
  if (p.wrong) line += std::to_string(*p.wrong);
  const LatencyStats& l = p.latency;
  for (double value : {l.medianUs, l.p99Us, l.minUs, l.maxUs}) line += "," + csvNumber(value);
}

}  // namespace

std::string csvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csvHeader() {
  std::string line;
  for (std::string_view column : kRowColumns) {
    if (!line.empty()) line += ',';
    line += column;
  }
  for (std::string_view prefix : {"oop_", "ip_"}) {
    for (std::string_view column : kPlacementColumns) {
      line += ',';
      line += prefix;
      line += column;
    }
  }
  return line + "\n";
}

std::string csvRow(const RowResult& row) {
  std::string line = csvField(collectiveName(row.collective));
  line += "," + csvField(row.algorithm);
  line += "," + csvField(row.transport);
  line += "," + csvField(row.memory);
  line += "," + std::to_string(row.bytes);
  line += "," + std::to_string(row.count);
  line += "," + csvField(row.type);
  line += "," + csvField(row.redop);
  line += "," + std::to_string(row.root);
  appendPlacement(line, row.outOfPlace);
  appendPlacement(line, row.inPlace);
  return line + "\n";
}

std::string formatCsvReport(const std::vector<RowResult>& rows) {
  std::string text = csvHeader();
  for (const RowResult& row : rows) text += csvRow(row);
  return text;
}

}  // namespace hoop::perf
