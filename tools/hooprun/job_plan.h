// The plan of a job: for each rank, what to execute on this machine, with which environment and
// which stdin. A pure function of the options and the launch context, so tests can check the
// environment contract and the ssh command without starting anything.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hooprun/launch_context.h"
#include "hooprun/options.h"

namespace hoop::run {

struct RankLaunch {
  size_t rank = 0;
  std::string host;               // where the rank runs ("localhost" for this machine)
  bool remote = false;            // started through the remote shell
  std::vector<std::string> argv;  // what hooprun executes here: prog..., or rsh... HOST SCRIPT
  std::vector<std::string> env;   // the complete environment of that local process, NAME=value
  std::string stdin_data;         // written to the process's stdin, then closed; empty: /dev/null
  std::vector<int> cpus;          // CPUs the process is bound to (--bind-to); empty: not bound
};

struct JobPlan {
  std::vector<RankLaunch> ranks;
  std::string root_addr;  // HOOP_ROOT_ADDR
  std::optional<std::chrono::milliseconds> timeout;
};

// True when no host is given or every host is a local alias: all ranks run here, rank 0 listens
// on 127.0.0.1.
bool runsOnThisHostOnly(const Options& options);

// The HOOP_* variables of one rank except HOOP_SECRET, which travels separately for remote ranks.
std::vector<EnvVar> launcherVariables(size_t rank, size_t size, const RankPlacement& place,
                                      const std::string& root_addr);

// `base` ("NAME=value" entries) with `overrides` applied: an entry whose name is overridden is
// dropped, the overrides are appended in order, and a later override of a name wins.
std::vector<std::string> mergeEnvironment(const std::vector<std::string>& base,
                                          const std::vector<EnvVar>& overrides);

// Throws UsageError when the hosts offer too few slots.
JobPlan planJob(const Options& options, const LaunchContext& context);

}  // namespace hoop::run
