// The '#' block before the table: what ran, where, and with which settings, so a pasted table
// carries its own context (nccl-tests' header, with hoop's facts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace hoop::perf {

// One rank's facts, gathered from every rank with one allgather of plain bytes.
struct RankInfo {
  char host[64] = {};  // gethostname, truncated and always terminated
  int64_t pid = 0;
  uint32_t hardwareThreads = 0;  // std::thread::hardware_concurrency on its host
  uint32_t reserved = 0;
};

struct RunDescription {
  Options options;
  int hoopVersion = 0;  // HOOP_VERSION_CODE encoding, from hoopGetVersion
  std::vector<RankInfo> ranks;
  // The header's "# Algorithm:" text: what hoop's cost model or HOOP_ALGO picks, or the schedules
  // --algo forces (each table then names its own). When the tuner lands, its choice per size.
  std::string algorithm = "ring";
  // --memory device: the device the buffers live on (deviceDescription()), and whether it is the
  // CPU emulation; "" on host memory.
  std::string device;
  bool deviceEmulated = false;
};

// What hoop runs for `collective` in this process's environment (HOOP_ALGO, else hoop's rule),
// in words for the header.
std::string algorithmInUse(Collective collective);

// Every line starts with '#' and ends with '\n'; the last is a lone "#".
std::string formatRunHeader(const RunDescription& run);

}  // namespace hoop::perf
