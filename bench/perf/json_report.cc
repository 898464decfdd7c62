#include "json_report.h"

#include <algorithm>

#include "algorithm.h"
#include "base/json_writer.h"
#include "dtype.h"

namespace hoop::perf {
namespace {

const char* averageKey(AverageMode mode) {
  switch (mode) {
    case AverageMode::kRank0: return "rank0";
    case AverageMode::kMean: return "mean";
    case AverageMode::kMin: return "min";
    case AverageMode::kMax: return "max";
  }
  return "?";
}

void writePlacement(JsonWriter& json, const PlacementResult& p) {
  json.beginObject();
  json.key("time_us").number(p.timeUs);
  json.key("algbw_gbs").number(p.algBwGBs);
  json.key("busbw_gbs").number(p.busBwGBs);
  json.key("wrong");
  if (p.wrong) {
    json.unsignedInteger(*p.wrong);
  } else {
    json.null();
  }
  json.key("median_us").number(p.latency.medianUs);
  json.key("p99_us").number(p.latency.p99Us);
  json.key("min_us").number(p.latency.minUs);
  json.key("max_us").number(p.latency.maxUs);
  json.endObject();
}

void writeRow(JsonWriter& json, const RowResult& row) {
  json.beginObject();
  json.key("collective").string(collectiveName(row.collective));
  json.key("algorithm").string(row.algorithm);
  json.key("transport").string(row.transport);
  json.key("memory").string(row.memory);
  json.key("size_bytes").unsignedInteger(row.bytes);
  json.key("count").unsignedInteger(row.count);
  json.key("type").string(row.type);
  json.key("redop").string(row.redop);
  json.key("root").integer(row.root);
  json.key("out_of_place");
  writePlacement(json, row.outOfPlace);
  json.key("in_place");
  writePlacement(json, row.inPlace);
  json.endObject();
}

void writeRanks(JsonWriter& json, const std::vector<RankInfo>& ranks) {
  std::vector<std::string> hosts;  // distinct, in rank order
  for (const RankInfo& info : ranks) {
    if (std::find(hosts.begin(), hosts.end(), info.host) == hosts.end())
      hosts.emplace_back(info.host);
  }
  json.key("nhosts").unsignedInteger(hosts.size());
  json.key("hosts").beginArray();
  for (const std::string& host : hosts) json.string(host);
  json.endArray();
  json.key("ranks").beginArray();
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    json.beginObject();
    json.key("rank").unsignedInteger(rank);
    json.key("host").string(ranks[rank].host);
    json.key("pid").integer(ranks[rank].pid);
    json.key("hardware_threads").unsignedInteger(ranks[rank].hardwareThreads);
    json.endObject();
  }
  json.endArray();
}

}  // namespace

std::string formatJsonReport(const RunDescription& run, const std::vector<TableSummary>& tables,
                             const std::vector<RowResult>& rows) {
  const Options& o = run.options;
  const int nranks = static_cast<int>(run.ranks.size());
  JsonWriter json;
  json.beginObject();
  json.key("format").string("hoop-perf");
  json.key("format_version").integer(kJsonFormatVersion);
  json.key("hoop_version")
      .string(std::to_string(run.hoopVersion / 10000) + "." +
              std::to_string(run.hoopVersion / 100 % 100) + "." +
              std::to_string(run.hoopVersion % 100));
  json.key("hoop_version_code").integer(run.hoopVersion);
  json.key("collective").string(collectiveName(o.collective));
  json.key("nranks").integer(nranks);
  writeRanks(json, run.ranks);
  json.key("memory").string(memoryName(o.memory));
  json.key("device");
  if (run.device.empty()) {
    json.null();
  } else {
    json.string(run.device);
  }
  json.key("device_emulated").boolean(run.deviceEmulated);
  json.key("transport").string(transportInUse());
  json.key("threads_per_rank").integer(1);
  json.key("iters").integer(o.iters);
  json.key("warmup_iters").integer(o.warmupIters);
  json.key("check").boolean(o.check);
  json.key("blocking").boolean(o.blocking);
  json.key("min_bytes").unsignedInteger(o.minBytes);
  json.key("max_bytes").unsignedInteger(o.maxBytes);
  json.key("step_factor").unsignedInteger(o.stepFactor);
  json.key("step_bytes").unsignedInteger(o.stepBytes);
  json.key("average").string(averageKey(o.average));
  json.key("average_mode").integer(static_cast<int>(o.average));
  json.key("root").integer(collectiveHasRoot(o.collective) ? o.root : -1);
  json.key("datatypes").beginArray();
  for (hoopDataType_t type : o.types) json.string(typeName(type));
  json.endArray();
  json.key("ops").beginArray();
  if (collectiveReduces(o.collective)) {
    for (hoopRedOp_t op : o.ops) json.string(opName(op));
  } else {
    json.string("none");
  }
  json.endArray();
  json.key("algo_option");
  if (o.algo.empty()) {
    json.null();
  } else {
    json.string(o.algo);
  }
  json.key("algorithm").string(run.algorithm);
  json.key("busbw_factor").number(busBwFactor(o.collective, nranks));
  json.key("tables").beginArray();
  for (const TableSummary& table : tables) {
    json.beginObject();
    json.key("algorithm").string(table.algorithm);
    json.key("rows").unsignedInteger(table.rows);
    json.key("wrong_total");
    if (o.check) {
      json.unsignedInteger(table.wrongTotal);
    } else {
      json.null();
    }
    json.key("avg_busbw_gbs").number(table.avgBusBwGBs);
    json.endObject();
  }
  json.endArray();
  json.key("rows").beginArray();
  for (const RowResult& row : rows) writeRow(json, row);
  json.endArray();
  json.endObject();
  return json.text();
}

}  // namespace hoop::perf
