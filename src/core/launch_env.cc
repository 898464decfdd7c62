#include "core/launch_env.h"

#include "base/env.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/logging.h"

namespace hoop {
namespace {

struct Source {
  const char* name;
  const char* rankVar;
  const char* sizeVar;
  const char* localRankVar;
};

// In order of precedence: hoop's own launcher first, then the schedulers.
constexpr Source kSources[] = {
    {"hooprun", "HOOP_RANK", "HOOP_SIZE", "HOOP_LOCAL_RANK"},
    {"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

}  // namespace

int launcherLocalRankHint() {
  for (const Source& source : kSources) {
    if (!envString(source.localRankVar)) continue;
    try {
      return static_cast<int>(envInt(source.localRankVar, -1));
    } catch (const Error&) {
      return -1;  // only a hint: a malformed value is reported where it matters, if anywhere
    }
  }
  return -1;
}

LaunchEnv readLaunchEnv() {
  LaunchEnv env;
  for (const Source& source : kSources) {
    if (!envString(source.rankVar)) continue;
    if (!envString(source.sizeVar)) {
      fail(hoopInvalidArgument, source.rankVar, " is set but ", source.sizeVar, " is not");
    }
    env.rank = static_cast<int>(envInt(source.rankVar, -1));
    env.size = static_cast<int>(envInt(source.sizeVar, -1));
    env.launcher = source.name;
    env.launcherLocalRank = static_cast<int>(envInt(source.localRankVar, -1));
    break;
  }
  if (env.launcher.empty()) {
    fail(hoopInvalidArgument,
         "hoopCommInitFromEnv: no rank in the environment; start the job with hooprun, mpirun, "
         "srun or torchrun (HOOP_RANK/HOOP_SIZE, OMPI_COMM_WORLD_*, SLURM_PROCID/SLURM_NTASKS or "
         "RANK/WORLD_SIZE)");
  }
  if (env.size < 1 || env.rank < 0 || env.rank >= env.size) {
    fail(hoopInvalidArgument, "hoopCommInitFromEnv: rank ", env.rank, " of ", env.size, " from ",
         env.launcher, " is out of range");
  }

  std::string rootText;
  if (auto root = envString("HOOP_ROOT_ADDR")) {
    rootText = *root;
  } else if (auto master = envString("MASTER_ADDR")) {
    long long port = envInt("MASTER_PORT", -1);
    if (port < 0 || port >= 65535) {
      fail(hoopInvalidArgument, "MASTER_ADDR is set but MASTER_PORT is missing or out of range");
    }
    bool ipv6 = master->find(':') != std::string::npos;
    rootText = str(ipv6 ? "[" : "", *master, ipv6 ? "]" : "", ':', port + 1);
  } else {
    fail(hoopInvalidArgument, "hoopCommInitFromEnv (", env.launcher,
         "): set HOOP_ROOT_ADDR=host:port (a port rank 0 can listen on) or MASTER_ADDR and "
         "MASTER_PORT");
  }
  env.id.root = SocketAddress::parse(rootText);

  if (auto secretHex = envString("HOOP_SECRET")) {
    auto secret = Secret::fromHex(*secretHex);
    if (!secret) fail(hoopInvalidArgument, "HOOP_SECRET must be 32 hex digits");
    env.id.secret = *secret;
    env.id.authenticated = true;
  } else {
    env.id.authenticated = false;
    log(LogLevel::kInfo, LogSubsys::kInit, env.rank,
        "no HOOP_SECRET: connections are not authenticated (any process that can reach the "
        "ports can join); set HOOP_SECRET to 32 hex digits on every rank to require it");
  }
  // Without a secret the tag still keeps two jobs on one root address apart.
  env.id.jobTag = fnv1a(rootText + "/" + std::to_string(env.size) + "/" + env.id.secret.toHex());
  log(LogLevel::kInfo, LogSubsys::kInit, env.rank, "rank ", env.rank, " of ", env.size, " from ",
      env.launcher, ", root ", rootText);
  return env;
}

}  // namespace hoop
