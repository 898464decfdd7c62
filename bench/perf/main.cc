// hoop-perf: times one hoop collective over a sweep of sizes, types and ops, out-of-place and
// in-place, checks every result exactly, and prints nccl-tests' table from rank 0; with --algo
// one table per forced schedule, with --json, --csv and --plot result files from rank 0.
#include <hoop/hoop.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "algorithm.h"
#include "buffers.h"
#include "collective.h"
#include "csv_report.h"
#include "data.h"
#include "device_memory.h"
#include "hoop_call.h"
#include "json_report.h"
#include "options.h"
#include "output_file.h"
#include "plot_report.h"
#include "run_header.h"
#include "runner.h"
#include "svg_chart.h"
#include "sweep.h"
#include "table.h"

namespace hoop::perf {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitWrongResults = 3;
constexpr int kExitOutputFile = 4;

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

// Everything the tables of one run share.
struct RunState {
  int rank = 0;
  int nranks = 1;
  RunDescription description;
  // The buffers the calls use: host memory, or (--memory device) the staging copies the check
  // fills and reads, beside the device buffers and the stream.
  std::optional<HostBuffer> sendBuffer;
  std::optional<HostBuffer> recvBuffer;
  std::optional<DeviceBuffer> deviceSend;
  std::optional<DeviceBuffer> deviceRecv;
  std::optional<BenchStream> stream;
};

// --memory device: the two device buffers and the stream, beside the host ones. false (with a
// line on stderr) where the device has no room for them.
bool allocateOnDevice(const Options& options, int rank, RunState& state) {
  try {
    state.deviceSend.emplace(options.maxBytes);
    state.deviceRecv.emplace(options.maxBytes);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hoop-perf: rank %d cannot allocate 2 x %zu bytes of device memory: %s\n",
                 rank, options.maxBytes, error.what());
    state.deviceSend.reset();
    state.deviceRecv.reset();
    return false;
  }
  state.stream.emplace();
  return true;
}

// The result files the command line asks for, each with its flag for messages.
struct OutputRequest {
  enum class Kind { kJson, kCsv, kPlot };
  Kind kind;
  const char* flag;
  std::string path;
};

std::vector<OutputRequest> requestedOutputs(const Options& options) {
  using Kind = OutputRequest::Kind;
  std::vector<OutputRequest> outputs;
  for (OutputRequest output : {OutputRequest{Kind::kJson, "--json", options.jsonPath},
                               OutputRequest{Kind::kCsv, "--csv", options.csvPath},
                               OutputRequest{Kind::kPlot, "--plot", options.plotPath}}) {
    if (!output.path.empty()) outputs.push_back(std::move(output));
  }
  return outputs;
}

std::string outputContent(OutputRequest::Kind kind, const RunState& state,
                          const std::vector<TableSummary>& tables,
                          const std::vector<RowResult>& rows) {
  switch (kind) {
    case OutputRequest::Kind::kJson: return formatJsonReport(state.description, tables, rows);
    case OutputRequest::Kind::kCsv: return formatCsvReport(rows);
    case OutputRequest::Kind::kPlot: break;
  }
  const std::string title = "hoop-perf " +
                            std::string(collectiveName(state.description.options.collective)) +
                            ", " + std::to_string(state.nranks) + " ranks: bus bandwidth";
  return renderSizeChartSvg(busBandwidthChart(title, rows));
}

// The header's algorithm line under --algo; without it, what hoop picks (algorithmInUse).
std::string describeAlgorithms(const Options& options) {
  if (options.algo.empty() || !scheduleCanBeForced(options.collective)) {
    return algorithmInUse(options.collective);
  }
  const std::vector<std::optional<std::string>> tables =
      tableAlgorithms(options.collective, options.algo);
  if (tables.size() == 1) return *tables.front() + " (--algo)";
  std::string names;
  for (const std::optional<std::string>& table : tables) {
    names += (names.empty() ? "" : ", ") + *table;
  }
  return names + " (--algo " + options.algo + ": one table each" +
         (options.interleave ? ", interleaved row by row)" : ")");
}

// Runs once, on the first table's communicator: checks what only ranks can check, allocates the
// buffers and prints the header. Returns the exit status when the run must stop, nullopt to go on.
// Every rank takes the same branch (each decision is agreed with a collective).
std::optional<int> setUpRun(hoopComm_t comm, const Options& options, RunState& state) {
  int version = 0;
  checkHoop(hoopCommUserRank(comm, &state.rank), "hoopCommUserRank", comm);
  checkHoop(hoopCommCount(comm, &state.nranks), "hoopCommCount", comm);
  checkHoop(hoopGetVersion(&version), "hoopGetVersion", comm);
  const int rank = state.rank;

  if (collectiveHasRoot(options.collective) && options.root >= state.nranks) {
    if (rank == 0) {
      std::fprintf(stderr, "hoop-perf: -r %d: the root must be a rank below %d\n", options.root,
                   state.nranks);
    }
    return kExitUsage;
  }

  // Only rank 0 writes files; the others wait for its verdict.
  uint64_t badPaths = 0;
  if (rank == 0) {
    for (const OutputRequest& output : requestedOutputs(options)) {
      if (std::string error = checkOutputPath(output.path); !error.empty()) {
        std::fprintf(stderr, "hoop-perf: %s: %s\n", output.flag, error.c_str());
        ++badPaths;
      }
    }
  }
  if (sumAcrossRanks(comm, badPaths) != 0) return kExitOutputFile;

  // Both buffers hold the largest row's whole buffer (rowCounts never exceeds maxBytes). Ranks
  // agree on failure, so one rank short of memory does not leave the others waiting.
  try {
    state.sendBuffer.emplace(options.maxBytes);
    state.recvBuffer.emplace(options.maxBytes);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "hoop-perf: rank %d cannot allocate 2 x %zu bytes of host memory\n", rank,
                 options.maxBytes);
  }
  if (sumAcrossRanks(comm, state.recvBuffer ? 0 : 1) != 0) return kExitHoopError;
  if (options.memory == MemoryKind::kDevice) {
    const bool allocated = allocateOnDevice(options, rank, state);
    if (sumAcrossRanks(comm, allocated ? 0 : 1) != 0) return kExitHoopError;
    state.description.device = deviceDescription();
    state.description.deviceEmulated = deviceIsEmulated();
  }

  state.description.options = options;
  state.description.hoopVersion = version;
  state.description.ranks = gatherRankInfo(comm, state.nranks);
  state.description.algorithm = describeAlgorithms(options);
  printOnRank0(rank, formatRunHeader(state.description));
  if (options.check && state.nranks > kMaxExactRanks) {
    printOnRank0(rank, "# Warning: above " + std::to_string(kMaxExactRanks) +
                           " ranks int8 sums may overflow, so their #wrong may be false\n#\n");
  }
  return std::nullopt;
}

// Rank 0 writes every requested file; true when all were written (on every rank).
bool writeOutputs(hoopComm_t comm, const RunState& state, const std::vector<TableSummary>& tables,
                  const std::vector<RowResult>& rows) {
  const Options& options = state.description.options;
  uint64_t failed = 0;
  if (state.rank == 0) {
    for (const OutputRequest& output : requestedOutputs(options)) {
      const std::string content = outputContent(output.kind, state, tables, rows);
      if (std::string error = writeFileAtomically(output.path, content); !error.empty()) {
        std::fprintf(stderr, "hoop-perf: %s: %s\n", output.flag, error.c_str());
        ++failed;
      }
    }
  }
  return sumAcrossRanks(comm, failed) == 0;
}

// Ends the run's communicator once every rank is done with it: no rank exits while another still
// finishes a row or rank 0 still prints.
void finishComm(hoopComm_t comm) {
  checkHoop(hoopBarrier(comm, nullptr), "hoopBarrier", comm);
  checkHoop(hoopCommDestroy(comm), "hoopCommDestroy", nullptr);
}

Bench tableBench(hoopComm_t comm, const Options& options, const RunState& state,
                 const std::optional<std::string>& algorithm) {
  const char* corruptEnv = std::getenv("HOOP_PERF_CORRUPT");
  const BufferPair host{state.sendBuffer->data(), state.recvBuffer->data()};
  Bench bench{comm,
              options,
              host,
              state.rank,
              state.nranks,
              state.rank == 0 && corruptEnv != nullptr && std::strcmp(corruptEnv, "1") == 0,
              algorithm,
              nullptr,
              {}};
  if (state.stream) {
    bench.buffers = {state.deviceSend->data(), state.deviceRecv->data()};
    bench.stream = state.stream->get();
    bench.staging = host;
  }
  return bench;
}

void printTableHeader(const Options& options, const RunState& state,
                      const std::optional<std::string>& algorithm) {
  if (!options.algo.empty()) printOnRank0(state.rank, "# Algorithm: " + *algorithm + "\n");
  printOnRank0(state.rank, tableColumnHeader());
}

int exitStatus(const std::vector<TableSummary>& summaries) {
  uint64_t wrongTotal = 0;
  for (const TableSummary& summary : summaries) wrongTotal += summary.wrongTotal;
  return wrongTotal != 0 ? kExitWrongResults : 0;
}

// Every table on one communicator, each forcing its schedule as it starts
// (hoopCommSetAlgorithms), so that the tables differ in their schedule alone: not in their
// connections, buffers or the pages they touch first. Table by table, each printing its rows as
// they are timed; with --interleave row by row, each row timed on every table in turn, the tables
// printed once every row is timed.
int run(const Options& options) {
  const std::vector<std::optional<std::string>> tables =
      tableAlgorithms(options.collective, options.algo);
  hoopComm_t comm = nullptr;
  checkHoop(hoopCommInitFromEnv(&comm), "hoopCommInitFromEnv", nullptr);
  RunState state;
  if (const std::optional<int> status = setUpRun(comm, options, state)) {
    checkHoop(hoopCommDestroy(comm), "hoopCommDestroy", nullptr);
    return *status;
  }
  std::vector<Bench> benches;
  for (const std::optional<std::string>& algorithm : tables) {
    benches.push_back(tableBench(comm, options, state, algorithm));
  }
  std::vector<SweepResult> sweeps;
  if (options.interleave) {
    sweeps = runInterleavedSweeps(benches);
    for (size_t t = 0; t < tables.size(); ++t) {
      printTableHeader(options, state, tables[t]);
      printSweep(state.rank, sweeps[t]);
    }
  } else {
    for (size_t t = 0; t < tables.size(); ++t) {
      printTableHeader(options, state, tables[t]);
      sweeps.push_back(runSweep(benches[t]));
    }
  }
  std::vector<TableSummary> summaries;
  std::vector<RowResult> rows;
  for (SweepResult& sweep : sweeps) {
    summaries.push_back(sweep.summary);
    rows.insert(rows.end(), std::make_move_iterator(sweep.rows.begin()),
                std::make_move_iterator(sweep.rows.end()));
  }
  const bool written = writeOutputs(comm, state, summaries, rows);
  finishComm(comm);
  return written ? exitStatus(summaries) : kExitOutputFile;
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
