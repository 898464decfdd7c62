#include "sweep.h"

#include <cstdio>

#include "algorithm.h"
#include "collective.h"
#include "dtype.h"
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

// One row's one placement: the timed batch, then (with -c 1) the check on a call of its own, so
// the timed loop never pays for filling or comparing.
PlacementResult measure(const Bench& bench, const CallSpec& call, size_t rowBytes, uint64_t seed) {
  const Options& options = bench.options;
  const Timing timing = timeCalls(bench.comm, call, bench.buffers, options.warmupIters,
                                  options.iters, options.minSeconds);
  PlacementResult result;
  result.timeUs = combineAcrossRanks(bench.comm, timing.usPerIteration, options.average);
  result.algBwGBs = bandwidthGBs(rowBytes, result.timeUs);
  result.busBwGBs = result.algBwGBs * busBwFactor(call.collective, bench.nranks);
  // Per iteration across ranks first, then statistics over iterations: the p99 of the slowest
  // rank's iterations under -a 3, not the slowest of each rank's own p99.
  result.latency =
      latencyStats(combineEachAcrossRanks(bench.comm, timing.iterationUs, options.average));
  if (options.check) {
    const DataPattern pattern = checkPattern(call, seed);
    prepareCheck(call, pattern, bench.buffers);
    runCall(bench.comm, call, bench.buffers);
    if (bench.corrupt) corruptResult(call, bench.buffers);
    result.wrong = sumAcrossRanks(bench.comm, countWrong(call, pattern, bench.buffers));
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

SweepResult runSweep(const Bench& bench) {
  const Options& options = bench.options;
  const Collective collective = options.collective;
  const bool reduces = collectiveReduces(collective);
  // Collectives that only move data run once per type, with redop "none".
  const std::vector<hoopRedOp_t> ops = reduces ? options.ops : std::vector<hoopRedOp_t>{hoopSum};
  const std::vector<size_t> sizes =
      sizeSweep(options.minBytes, options.maxBytes, options.stepFactor, options.stepBytes);
  const int shownRoot = collectiveHasRoot(collective) ? options.root : -1;

  SweepResult result;
  result.summary.algorithm = bench.forcedAlgorithm.value_or("auto");
  double busBwSum = 0.0;
  size_t busBwCount = 0;
  for (hoopDataType_t type : options.types) {
    for (hoopRedOp_t op : ops) {
      for (size_t size : sizes) {
        const RowCounts counts = rowCounts(collective, size, typeSize(type), bench.nranks);
        RowResult row;
        row.collective = collective;
        row.transport = transportInUse();
        row.bytes = counts.bytes;
        row.count = counts.count;
        row.type = std::string(typeName(type));
        row.redop = std::string(reduces ? opName(op) : "none");
        row.root = shownRoot;
        printOnRank0(bench.rank, rowPrefix(row.bytes, row.count, row.type, row.redop, row.root));
        for (bool inPlace : {false, true}) {
          const CallSpec call{collective,   type,       op,           options.root,
                              counts.count, bench.rank, bench.nranks, inPlace};
          const PlacementResult m =
              measure(bench, call, counts.bytes, checkSeed(type, op, size, inPlace));
          busBwSum += m.busBwGBs;
          ++busBwCount;
          result.summary.wrongTotal += m.wrong.value_or(0);
          printOnRank0(bench.rank, placementColumns(m.timeUs, m.algBwGBs, m.busBwGBs, m.wrong));
          (inPlace ? row.inPlace : row.outOfPlace) = m;
        }
        // Asked after the timed calls: the schedule they ran, once hoop had settled it.
        row.algorithm = scheduleForRow(bench.comm, collective, counts.count, type);
        printOnRank0(bench.rank, scheduleColumn(row.algorithm) + "\n");
        result.rows.push_back(std::move(row));
      }
    }
  }
  result.summary.rows = result.rows.size();
  result.summary.avgBusBwGBs = busBwCount > 0 ? busBwSum / busBwCount : 0.0;
  printOnRank0(bench.rank, tableFooter(result.summary.wrongTotal, result.summary.avgBusBwGBs));
  return result;
}

}  // namespace hoop::perf
