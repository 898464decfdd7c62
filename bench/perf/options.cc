#include "options.h"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "algorithm.h"
#include "dtype.h"
#include "sizes.h"

namespace hoop::perf {
namespace {

std::string collectiveList() {
  std::string list;
  for (Collective coll : kAllCollectives) {
    if (!list.empty()) list += ", ";
    list += collectiveName(coll);
  }
  return list;
}

// A whole decimal integer in [min, max], nothing around it.
std::optional<long long> parseInteger(std::string_view text, long long min, long long max) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (value < min || value > max) return std::nullopt;
  return value;
}

struct Flag {
  char shortName;  // '\0' when there is only a long name
  std::string_view longName;
  bool takesValue;
};

constexpr Flag kFlags[] = {
    {'b', "minbytes", true},     {'e', "maxbytes", true}, {'f', "stepfactor", true},
    {'i', "stepbytes", true},    {'n', "iters", true},    {'w', "warmup_iters", true},
    {'m', "min_seconds", true},  {'c', "check", true},    {'d', "datatype", true},
    {'o', "op", true},           {'r', "root", true},     {'z', "blocking", true},
    {'a', "average", true},      {'\0', "memory", true},  {'\0', "algo", true},
    {'\0', "json", true},        {'\0', "csv", true},     {'\0', "plot", true},
    {'\0', "interleave", false}, {'h', "help", false},
};

// Applies one flag's value to options; returns an error line, naming the flag as typed
// (spelledAs: "-b" or "--minbytes"), or "" when the value is good.
std::string applyFlag(const Flag& flag, std::string_view spelledAs, std::string_view value,
                      Options& options) {
  const std::string name(spelledAs);
  const std::string quoted = "'" + std::string(value) + "'";
  auto sizeValue = [&](size_t& into) -> std::string {
    const auto size = parseSize(value);
    if (!size) return name + ": " + quoted + " is not a size (bytes, optional K, M or G suffix)";
    into = *size;
    return "";
  };
  auto intValue = [&](auto& into, long long min, long long max) -> std::string {
    const auto parsed = parseInteger(value, min, max);
    if (!parsed) {
      return name + ": " + quoted + " is not a whole number from " + std::to_string(min) + " to " +
             std::to_string(max);
    }
    into = static_cast<std::remove_reference_t<decltype(into)>>(*parsed);
    return "";
  };
  auto boolValue = [&](bool& into) -> std::string {
    if (value != "0" && value != "1") return name + ": " + quoted + " is not 0 or 1";
    into = value == "1";
    return "";
  };
  constexpr long long kIntMax = 1'000'000'000;
  switch (flag.shortName) {
    case 'b': return sizeValue(options.minBytes);
    case 'e': return sizeValue(options.maxBytes);
    case 'i': return sizeValue(options.stepBytes);
    case 'f': return intValue(options.stepFactor, 1, 1 << 20);
    case 'n': return intValue(options.iters, 1, kIntMax);
    case 'w': return intValue(options.warmupIters, 0, kIntMax);
    case 'm': {
      const std::string text(value);
      char* end = nullptr;
      const double seconds = text.empty() ? -1 : std::strtod(text.c_str(), &end);
      if (end == nullptr || *end != '\0' || !(seconds >= 0 && seconds <= 3600)) {
        return name + ": " + quoted + " is not a number of seconds from 0 to 3600";
      }
      options.minSeconds = seconds;
      return "";
    }
    case 'r': return intValue(options.root, 0, kIntMax);
    case 'c': return boolValue(options.check);
    case 'z': return boolValue(options.blocking);
    case 'a': {
      int mode = 0;
      std::string error = intValue(mode, 0, 3);
      options.average = static_cast<AverageMode>(mode);
      return error;
    }
    case 'd': {
      if (value == "all") {
        options.types.assign(std::begin(kAllTypes), std::end(kAllTypes));
      } else if (const auto type = parseTypeName(value)) {
        options.types = {*type};
      } else {
        return name + ": unknown datatype " + quoted +
               "; use int8, uint8, int32, uint32, int64, uint64, half, float, double, bfloat16 "
               "or all";
      }
      return "";
    }
    case 'o': {
      if (value == "all") {
        options.ops.assign(std::begin(kAllOps), std::end(kAllOps));
      } else if (const auto op = parseOpName(value)) {
        options.ops = {*op};
      } else {
        return name + ": unknown op " + quoted + "; use sum, prod, max, min, avg or all";
      }
      return "";
    }
    default: break;
  }
  // The file names are taken as given; run() checks them before the sweep, on rank 0.
  auto pathValue = [&](std::string& into) -> std::string {
    if (value.empty()) return name + ": needs a file name";
    into = std::string(value);
    return "";
  };
  if (flag.longName == "algo") {
    if (value.empty()) return name + ": needs a schedule name, all or auto";
    options.algo = std::string(value);  // checked against the collective in validate()
    return "";
  }
  if (flag.longName == "json") return pathValue(options.jsonPath);
  if (flag.longName == "csv") return pathValue(options.csvPath);
  if (flag.longName == "plot") return pathValue(options.plotPath);
  if (flag.longName == "memory") {
    if (value == "host") {
      options.memory = MemoryKind::kHost;
    } else if (value == "device" || value == "cuda") {
      // cuda: nccl-tests' word for it. Whether a device is there is known only once the run
      // starts (the CUDA runtime, or HOOP_DEVICE_EMULATION=1), so it is not checked here.
      options.memory = MemoryKind::kDevice;
    } else {
      return name + ": unknown memory " + quoted + "; use host or device (cuda)";
    }
    return "";
  }
  return name + ": not handled (hoop-perf bug)";
}

// Checks the combination of flags once all are read.
std::string validate(const Options& options) {
  if (!options.algo.empty()) {
    if (std::string error = checkAlgoOption(options.collective, options.algo); !error.empty()) {
      return error;
    }
  }
  if (options.interleave && tableAlgorithms(options.collective, options.algo).size() < 2) {
    return "--interleave needs two tables or more to take turns: --algo auto,all, say";
  }
  if (options.minBytes > options.maxBytes) {
    return "-b (" + std::to_string(options.minBytes) + ") is larger than -e (" +
           std::to_string(options.maxBytes) + ")";
  }
  if (options.stepFactor == 1 && options.stepBytes == 0 && options.minBytes < options.maxBytes) {
    return "-i 0 with -f 1 never reaches -e: give a step in bytes above 0";
  }
  if (options.stepFactor > 1 && options.minBytes == 0 && options.maxBytes > 0) {
    return "-b 0 with -f above 1 never grows: start at 1 byte or more, or use -f 1 with -i";
  }
  return "";
}

}  // namespace

const char* memoryName(MemoryKind memory) {
  return memory == MemoryKind::kDevice ? "device" : "host";
}

ParseResult parseOptions(int argc, const char* const* argv) {
  ParseResult result;
  auto fail = [&](std::string error) {
    result.action = ParseResult::Action::kError;
    result.error = std::move(error);
    return result;
  };
  if (argc < 2) return fail("no collective given: hoop-perf <collective> [options] (-h for help)");
  const std::string_view first = argv[1];
  if (first == "-h" || first == "--help") {
    result.action = ParseResult::Action::kHelp;
    return result;
  }
  if (first.starts_with("-")) {
    return fail("the collective comes first: hoop-perf <collective> [options]; one of " +
                collectiveList());
  }
  const auto collective = parseCollectiveName(first);
  if (!collective) {
    return fail("unknown collective '" + std::string(first) + "'; choose one of " +
                collectiveList());
  }
  result.options.collective = *collective;

  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const Flag* flag = nullptr;
    std::string_view spelledAs = arg;       // the flag without its attached value
    std::optional<std::string_view> value;  // attached value: "-b8" or "--minbytes=8"
    if (arg.starts_with("--") && arg.size() > 2) {
      if (const size_t equals = arg.find('='); equals != std::string_view::npos) {
        value = arg.substr(equals + 1);
        spelledAs = arg.substr(0, equals);
      }
      for (const Flag& candidate : kFlags) {
        if (candidate.longName == spelledAs.substr(2)) flag = &candidate;
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      for (const Flag& candidate : kFlags) {
        if (candidate.shortName == arg[1]) flag = &candidate;
      }
      spelledAs = arg.substr(0, 2);
      if (arg.size() > 2) value = arg.substr(2);
    }
    if (flag == nullptr) {
      if (!arg.starts_with("-")) {
        return fail("unexpected argument '" + std::string(arg) + "' (see hoop-perf -h)");
      }
      return fail("unknown option '" + std::string(arg) + "' (see hoop-perf -h)");
    }
    if (!flag->takesValue) {
      if (value) return fail("option '" + std::string(arg) + "' takes no value");
      if (flag->longName == "interleave") {
        result.options.interleave = true;
        continue;
      }
      result.action = ParseResult::Action::kHelp;
      return result;
    }
    if (!value) {
      if (i + 1 >= argc) return fail("option '" + std::string(arg) + "' needs a value");
      value = argv[++i];
    }
    if (std::string error = applyFlag(*flag, spelledAs, *value, result.options); !error.empty()) {
      return fail(std::move(error));
    }
  }
  if (std::string error = validate(result.options); !error.empty()) return fail(std::move(error));
  result.action = ParseResult::Action::kRun;
  return result;
}

std::string usageText() {
  return R"(Usage: hoop-perf <collective> [options]
Times a hoop collective over a sweep of sizes and prints an nccl-tests style table (rank 0).
Start one process per rank with a launcher, e.g.
  hooprun -np 4 hoop-perf allreduce -b 8 -e 128M -f 2
(mpirun, srun and torchrun work too: ranks come from hoopCommInitFromEnv).

Collectives: allreduce, allgather, broadcast, reduce, reducescatter, sendrecv, alltoall
  sendrecv: each rank sends to rank+1 and receives from rank-1, in one group.
  alltoall: each rank sends block j of its buffer to rank j (nranks blocks of size/nranks).

Options:
  -b, --minbytes <size>     first size; K, M, G suffixes are powers of 1024 (default 32M)
  -e, --maxbytes <size>     last size (default 32M)
  -f, --stepfactor <n>      multiply the size by n at each step (default 2); 1: add -i
  -i, --stepbytes <size>    bytes added at each step when -f is 1 (default 1M)
  -n, --iters <n>           timed iterations per size (default 20)
  -w, --warmup_iters <n>    untimed iterations before them (default 5)
  -m, --min_seconds <s>     time each size for at least s seconds: more iterations than -n
                            where -n took less, the same on every rank (default 0: -n only)
  -c, --check <0|1>         check every result exactly, out-of-place and in-place (default 1)
  -d, --datatype <type>     int8 uint8 int32 uint32 int64 uint64 half float double bfloat16,
                            or all (default float)
  -o, --op <op>             sum prod max min avg, or all (default sum)
  -r, --root <rank>         root of broadcast and reduce (default 0)
  -z, --blocking <0|1>      accepted for nccl-tests command lines; host calls always block
  -a, --average <0-3>       time shown: 0 rank 0's, 1 mean over ranks, 2 min, 3 max (default 1)
      --memory <where>      host (default), or device (alias cuda): buffers in device memory
                            of the runtime hoop uses (CUDA; the CPU emulation under
                            HOOP_DEVICE_EMULATION=1, whose times mean nothing), every call
                            enqueued on one stream. time is the host clock around -n enqueued
                            calls and one synchronize of the stream (nccl-tests' way); a call's
                            own latency cannot be seen, so the files' per-iteration statistics
                            (median, p99, min, max) are that batch average
      --algo <name|all>     force hoop's schedule by its HOOP_ALGO name, or all: one table each
                            (allreduce: ring, direct, oneshot, twoshot, recdoubling,
                            rabenseifner, tree, hierarchical; allgather: ring, bruck, hierarchical; broadcast: ring,
                            tree, hierarchical; reduce: ring, tree; reducescatter: ring; sendrecv: grouped;
                            alltoall: pairwise). Default: hoop's own choice. A comma-separated list
                            gives a table per entry; auto in it is hoop's own choice (auto,all)
      --interleave          with several tables: time each row on every table in turn before the
                            next row, so that a machine whose speed drifts moves every table's
                            row alike; tables print at the end
      --json <file>         write the run and every row as JSON (rank 0; see README.md)
      --csv <file>          write every row as CSV, one header line
      --plot <file.svg>     write bus bandwidth against size as an SVG chart
  -h, --help                this text

Sizes are bytes of the whole buffer (allgather, reducescatter, alltoall: all ranks' blocks).
time is microseconds per iteration over the batch of -n iterations; algbw = size / time;
busbw = algbw * 2(n-1)/n (allreduce), (n-1)/n (allgather, reducescatter,
alltoall), 1 (others).
Files are written whole at the end (FILE.tmp, then renamed), with per-iteration latency
statistics (median, p99, min, max) that the table does not show.
Exit status: 0 success, 1 a hoop call failed, 2 bad command line, 3 wrong results,
4 an output file cannot be written.
Test-only: HOOP_PERF_CORRUPT=1 makes rank 0 flip one element of each result before the check.
)";
}

}  // namespace hoop::perf
