#include "sweep.h"

#include <cstdio>
#include <string>

#include "algorithm.h"
#include "collective.h"
#include "device_memory.h"
#include "dtype.h"
#include "hoop_call.h"
#include "runner.h"
#include "sizes.h"
#include "table.h"
#include "verify.h"

namespace hoop::perf {
namespace {

// Distinct per row and placement, so a result left over from an earlier call never passes.
uint64_t checkSeed(hoopDataType_t type, hoopRedOp_t op, size_t bytes, bool inPlace) {
  return (static_cast<uint64_t>(type) << 56) ^ (static_cast<uint64_t>(op) << 48) ^
         (static_cast<uint64_t>(inPlace) << 47) ^ bytes;
}

// The check's call (-c 1): inputs written and outputs poisoned, the call, its wrong elements on
// this rank. On device memory the same work goes through the host copies (bench.staging): the
// row's first rowBytes of both buffers (every byte a call of the row touches) are uploaded
// before the call and the result downloaded after it, so the check stays exact.
uint64_t countWrongOnRank(const Bench& bench, const CallSpec& call, size_t rowBytes,
                          uint64_t seed) {
  const DataPattern pattern = checkPattern(call, seed);
  if (bench.stream == nullptr) {
    prepareCheck(call, pattern, bench.buffers);
    runCall(bench.comm, call, bench.buffers);
    if (bench.corrupt) corruptResult(call, bench.buffers);
    return countWrong(call, pattern, bench.buffers);
  }
  prepareCheck(call, pattern, bench.staging);
  uploadToDevice(bench.buffers.send, bench.staging.send, rowBytes);
  uploadToDevice(bench.buffers.recv, bench.staging.recv, rowBytes);
  runCall(bench.comm, call, bench.buffers, bench.stream);
  synchronizeStream(bench.stream);
  downloadFromDevice(bench.staging.recv, bench.buffers.recv, rowBytes);
  if (bench.corrupt) corruptResult(call, bench.staging);
  return countWrong(call, pattern, bench.staging);
}

// One row's one placement: the timed batch, then (with -c 1) the check on a call of its own, so
// the timed loop never pays for filling or comparing.
PlacementResult measure(const Bench& bench, const CallSpec& call, size_t rowBytes, uint64_t seed) {
  const Options& options = bench.options;
  const Timing timing = timeCalls(bench.comm, call, bench.buffers, options.warmupIters,
                                  options.iters, options.minSeconds, bench.stream);
  PlacementResult result;
  result.timeUs = combineAcrossRanks(bench.comm, timing.usPerIteration, options.average);
  result.algBwGBs = bandwidthGBs(rowBytes, result.timeUs);
  result.busBwGBs = result.algBwGBs * busBwFactor(call.collective, bench.nranks);
  // Per iteration across ranks first, then statistics over iterations: the p99 of the slowest
  // rank's iterations under -a 3, not the slowest of each rank's own p99.
  result.latency =
      latencyStats(combineEachAcrossRanks(bench.comm, timing.iterationUs, options.average));
  if (options.check) {
    result.wrong = sumAcrossRanks(bench.comm, countWrongOnRank(bench, call, rowBytes, seed));
  }
  return result;
}

// The schedule hoop runs on comm for one call of `count` elements (as the call takes them) of
// `type`, as hoop itself names it; "grouped" for sendrecv.
std::string scheduleForRow(hoopComm_t comm, Collective coll, size_t count, hoopDataType_t type) {
  hoopCollective_t asked{};
  if (!scheduledCollective(coll, &asked)) return "grouped";
  const char* name = nullptr;
  if (hoopCommScheduleName(comm, asked, count, type, &name) != hoopSuccess) return "unknown";
  return name;
}

}  // namespace

void printOnRank0(int rank, const std::string& text) {
  if (rank != 0) return;
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

namespace {

// One row of a sweep: a type, an op and a size, both placements.
struct RowSpec {
  hoopDataType_t type;
  hoopRedOp_t op;
  size_t size;
};

// The run's rows in the order a table prints them: every type, op, then size.
std::vector<RowSpec> sweepRows(const Options& options) {
  // Collectives that only move data run once per type, with redop "none".
  const std::vector<hoopRedOp_t> ops =
      collectiveReduces(options.collective) ? options.ops : std::vector<hoopRedOp_t>{hoopSum};
  const std::vector<size_t> sizes =
      sizeSweep(options.minBytes, options.maxBytes, options.stepFactor, options.stepBytes);
  std::vector<RowSpec> rows;
  for (hoopDataType_t type : options.types) {
    for (hoopRedOp_t op : ops) {
      for (size_t size : sizes) rows.push_back({type, op, size});
    }
  }
  return rows;
}

// Times one row on bench's communicator, out-of-place then in-place, and checks it (-c 1);
// prints it on rank 0 as it goes when `print`.
RowResult measureRow(const Bench& bench, const RowSpec& spec, bool print) {
  const Options& options = bench.options;
  const Collective collective = options.collective;
  const RowCounts counts = rowCounts(collective, spec.size, typeSize(spec.type), bench.nranks);
  RowResult row;
  row.collective = collective;
  row.transport = transportInUse();
  row.memory = memoryName(options.memory);
  row.bytes = counts.bytes;
  row.count = counts.count;
  row.type = std::string(typeName(spec.type));
  row.redop = std::string(collectiveReduces(collective) ? opName(spec.op) : "none");
  row.root = collectiveHasRoot(collective) ? options.root : -1;
  auto show = [&](const std::string& text) {
    if (print) printOnRank0(bench.rank, text);
  };
  show(rowPrefix(row.bytes, row.count, row.type, row.redop, row.root));
  for (bool inPlace : {false, true}) {
    const CallSpec call{collective,   spec.type,  spec.op,      options.root,
                        counts.count, bench.rank, bench.nranks, inPlace};
    PlacementResult& m = inPlace ? row.inPlace : row.outOfPlace;
    m = measure(bench, call, counts.bytes, checkSeed(spec.type, spec.op, spec.size, inPlace));
    show(placementColumns(m.timeUs, m.algBwGBs, m.busBwGBs, m.wrong));
  }
  // Asked after the timed calls: the schedule they ran, once hoop had settled it. hoop's query
  // answers for host calls only; device calls run on a team of their own, whose choice it cannot
  // name: there a row names the schedule --algo forced, else "auto" (hoop's own choice).
  if (bench.stream == nullptr) {
    row.algorithm = scheduleForRow(bench.comm, collective, counts.count, spec.type);
  } else {
    row.algorithm = bench.table.value_or(std::string(kOwnChoice));
  }
  show(scheduleColumn(row.algorithm) + "\n");
  return row;
}

// A table's records and footer figures: the mean bus bandwidth over every placement of every row.
SweepResult summarized(const Bench& bench, std::vector<RowResult> rows) {
  SweepResult result;
  result.summary.algorithm = bench.table.value_or(std::string(kOwnChoice));
  double busBwSum = 0.0;
  for (const RowResult& row : rows) {
    for (const PlacementResult* m : {&row.outOfPlace, &row.inPlace}) {
      busBwSum += m->busBwGBs;
      result.summary.wrongTotal += m->wrong.value_or(0);
    }
  }
  result.summary.rows = rows.size();
  result.summary.avgBusBwGBs = rows.empty() ? 0.0 : busBwSum / static_cast<double>(2 * rows.size());
  result.rows = std::move(rows);
  return result;
}

// A table's turn on the communicator the tables share: its schedule becomes the communicator's
// rules ("" for hoop's own choice). Without --algo, or for a collective with one schedule, there
// is nothing to set.
void takeTurn(const Bench& bench) {
  if (!bench.table || !scheduleCanBeForced(bench.options.collective)) return;
  const std::string rules = *bench.table == kOwnChoice ? std::string() : *bench.table;
  checkHoop(hoopCommSetAlgorithms(bench.comm, rules.c_str()), "hoopCommSetAlgorithms", bench.comm);
}

}  // namespace

SweepResult runSweep(const Bench& bench) {
  takeTurn(bench);
  std::vector<RowResult> rows;
  for (const RowSpec& spec : sweepRows(bench.options))
    rows.push_back(measureRow(bench, spec, true));
  SweepResult result = summarized(bench, std::move(rows));
  printOnRank0(bench.rank, tableFooter(result.summary.wrongTotal, result.summary.avgBusBwGBs));
  return result;
}

std::vector<SweepResult> runInterleavedSweeps(std::span<const Bench> benches) {
  const std::vector<RowSpec> specs = sweepRows(benches.front().options);
  std::vector<std::vector<RowResult>> rows(benches.size());
  for (size_t r = 0; r < specs.size(); ++r) {
    for (size_t k = 0; k < benches.size(); ++k) {
      const size_t t = tableInTurn(r, k, benches.size());
      takeTurn(benches[t]);
      rows[t].push_back(measureRow(benches[t], specs[r], false));
    }
  }
  std::vector<SweepResult> sweeps;
  for (size_t t = 0; t < benches.size(); ++t) {
    sweeps.push_back(summarized(benches[t], std::move(rows[t])));
  }
  return sweeps;
}

void printSweep(int rank, const SweepResult& sweep) {
  for (const RowResult& row : sweep.rows) {
    std::string line = rowPrefix(row.bytes, row.count, row.type, row.redop, row.root);
    for (const PlacementResult* m : {&row.outOfPlace, &row.inPlace}) {
      line += placementColumns(m->timeUs, m->algBwGBs, m->busBwGBs, m->wrong);
    }
    printOnRank0(rank, line + scheduleColumn(row.algorithm) + "\n");
  }
  printOnRank0(rank, tableFooter(sweep.summary.wrongTotal, sweep.summary.avgBusBwGBs));
}

}  // namespace hoop::perf
