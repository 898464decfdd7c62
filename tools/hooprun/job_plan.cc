#include "hooprun/job_plan.h"

#include <algorithm>
#include <set>

#include "hooprun/remote_command.h"

namespace hoop::run {
namespace {

std::string nameOf(const std::string& entry) { return entry.substr(0, entry.find('=')); }

// The host remote ranks should connect to for rank 0.
std::string rootHost(const Options& options, const RankPlacement& rank0,
                     const LaunchContext& context) {
  if (runsOnThisHostOnly(options)) return "127.0.0.1";
  // "localhost" would mean the remote machine itself to a remote rank.
  if (isLocalHostName(rank0.host)) return context.local_hostname;
  return rank0.host;
}

}  // namespace

bool runsOnThisHostOnly(const Options& options) {
  return std::all_of(options.hosts.begin(), options.hosts.end(),
                     [](const HostSlots& h) { return isLocalHostName(h.name); });
}

std::vector<EnvVar> launcherVariables(size_t rank, size_t size, const RankPlacement& place,
                                      const std::string& root_addr) {
  return {
      {"HOOP_RANK", std::to_string(rank)},
      {"HOOP_SIZE", std::to_string(size)},
      {"HOOP_LOCAL_RANK", std::to_string(place.local_rank)},
      {"HOOP_LOCAL_SIZE", std::to_string(place.local_size)},
      {"HOOP_ROOT_ADDR", root_addr},
      {"HOOP_LAUNCHER", "hooprun"},
  };
}

std::vector<std::string> mergeEnvironment(const std::vector<std::string>& base,
                                          const std::vector<EnvVar>& overrides) {
  std::set<std::string> overridden;
  for (const EnvVar& var : overrides) overridden.insert(var.name);
  std::vector<std::string> merged;
  for (const std::string& entry : base) {
    if (!overridden.count(nameOf(entry))) merged.push_back(entry);
  }
  // Walk backwards so the last override of a name is the one kept, then restore the order.
  std::set<std::string> seen;
  std::vector<std::string> appended;
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    if (seen.insert(it->name).second) appended.push_back(it->name + "=" + it->value);
  }
  merged.insert(merged.end(), appended.rbegin(), appended.rend());
  return merged;
}

JobPlan planJob(const Options& options, const LaunchContext& context) {
  std::vector<HostSlots> hosts = options.hosts;
  if (hosts.empty()) hosts.push_back(HostSlots{"localhost", options.num_ranks});
  std::vector<RankPlacement> placement = placeRanks(hosts, options.num_ranks);

  JobPlan plan;
  plan.timeout = options.timeout;
  plan.root_addr =
      rootHost(options, placement.front(), context) + ":" + std::to_string(context.root_port);
  for (size_t rank = 0; rank < placement.size(); ++rank) {
    const RankPlacement& place = placement[rank];
    RankLaunch launch;
    launch.rank = rank;
    launch.host = place.host;
    launch.remote = !isLocalHostName(place.host);

    std::vector<EnvVar> vars = options.exports;
    std::vector<EnvVar> hoop = launcherVariables(rank, placement.size(), place, plan.root_addr);
    vars.insert(vars.end(), hoop.begin(), hoop.end());
    if (launch.remote) {
      // The local process is the ssh client: it keeps hooprun's environment (SSH_AUTH_SOCK...)
      // and the rank's variables travel in the remote script, the secret on stdin.
      launch.argv =
          remoteArgv(context.rsh, place.host, remoteScript(context.cwd, vars, options.program));
      launch.env = context.environ;
      launch.stdin_data = context.secret + "\n";
    } else {
      vars.push_back(EnvVar{"HOOP_SECRET", context.secret});
      launch.argv = options.program;
      launch.env = mergeEnvironment(context.environ, vars);
      if (options.bind_to == Binding::kCore) {
        launch.cpus = cpusOfLocalRank(context.cores, place.local_rank);
      }
    }
    plan.ranks.push_back(std::move(launch));
  }
  return plan;
}

}  // namespace hoop::run
