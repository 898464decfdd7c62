// hoop-perf's command line: nccl-tests' flags and defaults, parsed without global state so tests
// can drive it.
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <string>
#include <vector>

#include "collective.h"

namespace hoop::perf {

// How the per-rank times of one row combine into the time the table shows (nccl-tests' -a).
enum class AverageMode { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

// --memory: host buffers, blocking calls (null stream); or device buffers, every call enqueued on
// one stream (device_memory.h).
enum class MemoryKind { kHost, kDevice };

// "host" or "device": the header's, JSON's and CSV's word for it.
const char* memoryName(MemoryKind memory);

struct Options {
  Collective collective = Collective::kAllReduce;
  size_t minBytes = size_t{32} << 20;
  size_t maxBytes = size_t{32} << 20;
  size_t stepFactor = 2;
  size_t stepBytes = size_t{1} << 20;  // used only when stepFactor is 1
  int iters = 20;
  int warmupIters = 5;
  // -m: time at least this many seconds a size, with more timed iterations than -n where the
  // first -n took less (0: exactly -n, as nccl-tests does). The peer benches of bench/compare
  // take the same rule, so sub-microsecond calls are judged on as many samples on both sides.
  double minSeconds = 0;
  bool check = true;
  std::vector<hoopDataType_t> types = {hoopFloat};
  std::vector<hoopRedOp_t> ops = {hoopSum};
  int root = 0;
  bool blocking = false;  // accepted for nccl-tests' command lines; host calls block anyway
  AverageMode average = AverageMode::kMean;
  MemoryKind memory = MemoryKind::kHost;
  // --algo: "" (hoop's own choice, from HOOP_ALGO or its cost model), or a comma-separated list
  // of schedules of the collective, "all" (one table per schedule) and "auto" (algorithm.h).
  std::string algo;
  // --interleave: every table's communicator at once, each row timed on each in turn.
  bool interleave = false;
  // --json, --csv, --plot: result files rank 0 writes at the end; "" for none.
  std::string jsonPath;
  std::string csvPath;
  std::string plotPath;
};

struct ParseResult {
  enum class Action { kRun, kHelp, kError };
  Action action = Action::kError;
  Options options;
  std::string error;  // for kError: one line saying what is wrong, without "hoop-perf: "
};

// argv[0] is the program; argv[1] the collective (or -h); flags follow, as "-b 8", "-b8",
// "--minbytes 8" or "--minbytes=8".
ParseResult parseOptions(int argc, const char* const* argv);

// The -h text.
std::string usageText();

}  // namespace hoop::perf
