#include "run_header.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "algorithm.h"

namespace hoop::perf {
namespace {

const char* averageName(AverageMode mode) {
  switch (mode) {
    case AverageMode::kRank0: return "rank 0";
    case AverageMode::kMean: return "mean over ranks";
    case AverageMode::kMin: return "min over ranks";
    case AverageMode::kMax: return "max over ranks";
  }
  return "?";
}

}  // namespace

std::string formatRunHeader(const RunDescription& run) {
  const Options& o = run.options;
  const std::string name(collectiveName(o.collective));
  char line[512];
  std::string text;
  std::snprintf(line, sizeof(line), "# hoop-perf %s: hoop %d.%d.%d, %zu ranks\n", name.c_str(),
                run.hoopVersion / 10000, run.hoopVersion / 100 % 100, run.hoopVersion % 100,
                run.ranks.size());
  text += line;
  const bool byFactor = o.stepFactor > 1;
  std::snprintf(line, sizeof(line),
                "# nThread 1 nRanks %zu minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d "
                "iters: %d validation: %d blocking: %d\n",
                run.ranks.size(), o.minBytes, o.maxBytes, byFactor ? o.stepFactor : o.stepBytes,
                byFactor ? "factor" : "bytes", o.warmupIters, o.iters, o.check ? 1 : 0,
                o.blocking ? 1 : 0);
  text += line;
  const std::string memory = run.device.empty() ? std::string(memoryName(o.memory))
                                                : std::string(memoryName(o.memory)) + " (" +
                                                      run.device + "), calls on one stream";
  std::snprintf(line, sizeof(line), "# Memory: %s, time: %s (-a %d)\n", memory.c_str(),
                averageName(o.average), static_cast<int>(o.average));
  text += line;
  if (run.deviceEmulated) {
    // The emulation runs the device path on the CPU for tests: its times say nothing of a GPU.
    text += "# Device: emulated on the CPU (HOOP_DEVICE_EMULATION=1): the times mean nothing\n";
  }
  text += "# Algorithm: " + run.algorithm + "\n";
  const std::string transport = transportInUse();
  text += "# Transport: " + transport +
          (transport == "auto" ? " (shm to ranks on the same host, tcp to the others)" : "") + "\n";
  text += "#\n# Using ranks\n";
  for (size_t rank = 0; rank < run.ranks.size(); ++rank) {
    const RankInfo& info = run.ranks[rank];
    std::snprintf(line, sizeof(line), "#  Rank %2zu Pid %6" PRId64 " on %10.64s hw threads %3u\n",
                  rank, info.pid, info.host, info.hardwareThreads);
    text += line;
  }
  text += "#\n";
  return text;
}

std::string algorithmInUse(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce: {
      const char* forced = std::getenv("HOOP_ALGO");
      if (forced != nullptr && forced[0] != '\0') return std::string(forced) + " (HOOP_ALGO)";
      return "hoop's cost model picks per size (each row names the schedule)";
    }
    case Collective::kAllGather: return "hierarchical on several equal hosts, else ring";
    case Collective::kBroadcast:
      return "hierarchical chains on several equal hosts, else pipelined chain";
    case Collective::kReduceScatter: return "ring";
    case Collective::kReduce: return "pipelined chain";
    case Collective::kSendRecv: return "grouped send/recv";
    case Collective::kAllToAll: return "pairwise exchange";
  }
  return "unknown";
}

}  // namespace hoop::perf
