// hoop-perf: times one hoop collective over a sweep of sizes, types and ops, out-of-place and
// in-place, checks every result exactly, and prints nccl-tests' table from rank 0.
#include <hoop/hoop.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "buffers.h"
#include "collective.h"
#include "dtype.h"
#include "hoop_call.h"
#include "options.h"
#include "run_header.h"
#include "runner.h"
#include "sizes.h"
#include "table.h"
#include "verify.h"

namespace hoop::perf {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitWrongResults = 3;

// Before a communicator exists hoop-perf does not know its rank, but every launcher hoop supports
// says it in the environment. Used only so that a bad command line or -h prints once, not once
// per rank; hoopCommInitFromEnv stays the authority.
int launcherRankHint() {
  for (const char* name :
       {"HOOP_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    int rank = 0;
    const std::string_view text(value);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (error == std::errc() && end == text.data() + text.size()) return rank;
  }
  return 0;
}

RankInfo localRankInfo() {
  RankInfo info;
  if (gethostname(info.host, sizeof(info.host) - 1) != 0) {
    std::snprintf(info.host, sizeof(info.host), "unknown");
  }
  info.host[sizeof(info.host) - 1] = '\0';
  info.pid = getpid();
  info.hardwareThreads = std::thread::hardware_concurrency();
  return info;
}

std::vector<RankInfo> gatherRankInfo(hoopComm_t comm, int nranks) {
  const RankInfo mine = localRankInfo();
  std::vector<RankInfo> all(static_cast<size_t>(nranks));
  checkHoop(hoopAllGather(&mine, all.data(), sizeof(RankInfo), hoopUint8, comm, nullptr),
            "hoopAllGather", comm);
  for (RankInfo& info : all) info.host[sizeof(info.host) - 1] = '\0';
  return all;
}

// Distinct per row and placement, so a result left over from an earlier call never passes.
uint64_t checkSeed(hoopDataType_t type, hoopRedOp_t op, size_t bytes, bool inPlace) {
  return (static_cast<uint64_t>(type) << 56) ^ (static_cast<uint64_t>(op) << 48) ^
         (static_cast<uint64_t>(inPlace) << 47) ^ bytes;
}

// Prints rank 0's text at once, so a hang shows which row it is in.
void printOnRank0(int rank, const std::string& text) {
  if (rank != 0) return;
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

// What every measurement of a run shares.
struct Bench {
  hoopComm_t comm = nullptr;
  const Options& options;
  BufferPair buffers;
  double busFactor = 1.0;
  bool corrupt = false;  // HOOP_PERF_CORRUPT=1, rank 0 only
};

struct Measurement {
  double timeUs = 0.0;
  double algBw = 0.0;
  double busBw = 0.0;
  std::optional<uint64_t> wrong;  // summed over ranks; nullopt with -c 0
};

// One row's one placement: the timed batch, then (with -c 1) the check on a call of its own, so
// the timed loop never pays for filling or comparing.
Measurement measure(const Bench& bench, const CallSpec& call, size_t rowBytes, uint64_t seed) {
  const Options& options = bench.options;
  const Timing timing =
      timeCalls(bench.comm, call, bench.buffers, options.warmupIters, options.iters);
  Measurement result;
  result.timeUs = combineAcrossRanks(bench.comm, timing.usPerIteration, options.average);
  result.algBw = bandwidthGBs(rowBytes, result.timeUs);
  result.busBw = result.algBw * bench.busFactor;
  if (options.check) {
    const DataPattern pattern = checkPattern(call, seed);
    prepareCheck(call, pattern, bench.buffers);
    runCall(bench.comm, call, bench.buffers);
    if (bench.corrupt) corruptResult(call, bench.buffers);
    result.wrong = sumAcrossRanks(bench.comm, countWrong(call, pattern, bench.buffers));
  }
  return result;
}

int run(const Options& options) {
  hoopComm_t comm = nullptr;
  checkHoop(hoopCommInitFromEnv(&comm), "hoopCommInitFromEnv", nullptr);
  int rank = 0;
  int nranks = 1;
  int version = 0;
  checkHoop(hoopCommUserRank(comm, &rank), "hoopCommUserRank", comm);
  checkHoop(hoopCommCount(comm, &nranks), "hoopCommCount", comm);
  checkHoop(hoopGetVersion(&version), "hoopGetVersion", comm);

  const Collective collective = options.collective;
  if (collectiveHasRoot(collective) && options.root >= nranks) {
    if (rank == 0) {
      std::fprintf(stderr, "hoop-perf: -r %d: the root must be a rank below %d\n", options.root,
                   nranks);
    }
    checkHoop(hoopCommDestroy(comm), "hoopCommDestroy", nullptr);
    return kExitUsage;
  }

  // Both buffers hold the largest row's whole buffer (rowCounts never exceeds maxBytes). Ranks
  // agree on failure, so one rank short of memory does not leave the others waiting.
  std::optional<HostBuffer> sendBuffer;
  std::optional<HostBuffer> recvBuffer;
  try {
    sendBuffer.emplace(options.maxBytes);
    recvBuffer.emplace(options.maxBytes);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hoop-perf: rank %d cannot allocate 2 x %zu bytes of host memory\n", rank,
                 options.maxBytes);
  }
  if (sumAcrossRanks(comm, recvBuffer ? 0 : 1) != 0) {
    checkHoop(hoopCommDestroy(comm), "hoopCommDestroy", nullptr);
    return kExitHoopError;
  }

  RunDescription description;
  description.options = options;
  description.hoopVersion = version;
  description.ranks = gatherRankInfo(comm, nranks);
  description.algorithm = algorithmInUse(options.collective);
  printOnRank0(rank, formatRunHeader(description));
  if (options.check && nranks > kMaxExactRanks) {
    printOnRank0(rank, "# Warning: above " + std::to_string(kMaxExactRanks) +
                           " ranks int8 sums may overflow, so their #wrong may be false\n#\n");
  }
  printOnRank0(rank, tableColumnHeader());

  const char* corruptEnv = std::getenv("HOOP_PERF_CORRUPT");
  const Bench bench{comm,
                    options,
                    {sendBuffer->data(), recvBuffer->data()},
                    busBwFactor(collective, nranks),
                    rank == 0 && corruptEnv != nullptr && std::strcmp(corruptEnv, "1") == 0};
  const bool reduces = collectiveReduces(collective);
  // Collectives that only move data run once per type, with redop "none".
  const std::vector<hoopRedOp_t> ops = reduces ? options.ops : std::vector<hoopRedOp_t>{hoopSum};
  const std::vector<size_t> sizes =
      sizeSweep(options.minBytes, options.maxBytes, options.stepFactor, options.stepBytes);
  const int shownRoot = collectiveHasRoot(collective) ? options.root : -1;

  uint64_t wrongTotal = 0;
  double busBwSum = 0.0;
  size_t busBwCount = 0;
  for (hoopDataType_t type : options.types) {
    for (hoopRedOp_t op : ops) {
      for (size_t size : sizes) {
        const RowCounts row = rowCounts(collective, size, typeSize(type), nranks);
        printOnRank0(rank, rowPrefix(row.bytes, row.count, typeName(type),
                                     reduces ? opName(op) : "none", shownRoot));
        for (bool inPlace : {false, true}) {
          const CallSpec call{collective, type, op, options.root, row.count, rank, nranks, inPlace};
          const Measurement m = measure(bench, call, row.bytes, checkSeed(type, op, size, inPlace));
          busBwSum += m.busBw;
          ++busBwCount;
          wrongTotal += m.wrong.value_or(0);
          printOnRank0(rank, placementColumns(m.timeUs, m.algBw, m.busBw, m.wrong));
        }
        printOnRank0(rank, "\n");
      }
    }
  }
  printOnRank0(rank, tableFooter(wrongTotal, busBwCount > 0 ? busBwSum / busBwCount : 0.0));
  // No rank exits before rank 0 has printed the footer: launchers stop the whole job when one rank
  // exits non-zero (wrong results), which would otherwise cut the table short.
  checkHoop(hoopBarrier(comm, nullptr), "hoopBarrier", comm);
  checkHoop(hoopCommDestroy(comm), "hoopCommDestroy", nullptr);
  return wrongTotal != 0 ? kExitWrongResults : 0;
}

}  // namespace
}  // namespace hoop::perf

int main(int argc, char** argv) {
  using hoop::perf::ParseResult;
  const ParseResult parsed = hoop::perf::parseOptions(argc, argv);
  const bool firstRank = hoop::perf::launcherRankHint() == 0;
  switch (parsed.action) {
    case ParseResult::Action::kHelp:
      if (firstRank) std::fputs(hoop::perf::usageText().c_str(), stdout);
      return 0;
    case ParseResult::Action::kError:
      if (firstRank) std::fprintf(stderr, "hoop-perf: %s\n", parsed.error.c_str());
      return hoop::perf::kExitUsage;
    case ParseResult::Action::kRun: break;
  }
  return hoop::perf::run(parsed.options);
}
