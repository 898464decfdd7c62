#include "core/launch_env.h"

#include <sys/socket.h>

#include <atomic>
#include <cstring>
#include <sstream>

#include "base/env.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/logging.h"
#include "core/pmix_client.h"
#include "core/slurm_step.h"
#include "transport/tcp/interfaces.h"

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

// What rank 0 publishes under PMIx: "<secret hex> <job tag> <root address>", or "! <why>" when
// it could not start the root, so the others fail with its reason instead of waiting. Under
// "hoop.rendezvous.<n>" for the process's n-th such rendezvous: every rank of a job creates its
// communicators in the same order, and a key is never reused, so no rank can read a value left
// by an earlier communicator.
std::string pmixKey() {
  static std::atomic<uint64_t> rendezvousCount{0};
  return str("hoop.rendezvous.", rendezvousCount.fetch_add(1, std::memory_order_relaxed));
}

std::string withBrackets(const std::string& host) {
  bool ipv6 = host.find(':') != std::string::npos;
  return str(ipv6 ? "[" : "", host, ipv6 ? "]" : "");
}

// Secret and job tag from the environment, for every way but PMIx.
void completeIdFromEnvironment(LaunchEnv& env, const std::string& rootText) {
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
}

void planSlurmStep(LaunchEnv& env) {
  SlurmStepRoot step = slurmStepRoot();
  std::string rootText = str(withBrackets(step.host), ':', step.port);
  env.rootWay = RootWay::kSlurmStep;
  env.rootDetail = str("host ", step.host, " (first of SLURM_STEP_NODELIST), port ", step.port,
                       " (from job ", step.jobId, " step ", step.stepId, ")");
  completeIdFromEnvironment(env, rootText);
  bool ipv6 = env.id.root.family() == AF_INET6;
  env.rootListen = SocketAddress::parse(str(ipv6 ? "[::]:" : "0.0.0.0:", step.port));
}

void logRoot(const LaunchEnv& env) {
  log(LogLevel::kInfo, LogSubsys::kInit, env.rank, "rank ", env.rank, " of ", env.size, " from ",
      env.launcher, ", root ", env.id.root.toString(), " found through ", rootWayName(env.rootWay),
      env.rootDetail.empty() ? "" : ": ", env.rootDetail);
}

// Every way but PMIx: each rank worked out the root's address by itself; rank 0 serves it.
std::unique_ptr<RootService> startKnownRoot(LaunchEnv& env, std::chrono::milliseconds timeout) {
  logRoot(env);
  if (env.rank != 0) return nullptr;
  if (env.rootWay != RootWay::kSlurmStep) {
    return std::make_unique<RootService>(env.rootListen, env.id, timeout);
  }
  auto node = envString("SLURMD_NODENAME");
  SlurmStepRoot step = slurmStepRoot();
  if (node && *node != step.host) {
    log(LogLevel::kWarn, LogSubsys::kInit, env.rank, "rank 0 runs on node ", *node,
        " but the other ranks look for the root on ", step.host,
        ", the step's first host (a task distribution that does not start on the first node?)");
  }
  try {
    return std::make_unique<RootService>(env.rootListen, env.id, timeout);
  } catch (const Error& e) {
    fail(e.code(), "hoopCommInitFromEnv (Slurm): rank 0 cannot serve the rendezvous on port ",
         step.port, ", derived from job ", step.jobId, " step ", step.stepId, " (", e.what(),
         "); another program holds the port: set HOOP_ROOT_ADDR=host:port to choose one, or "
         "start the step with srun --mpi=pmix");
  }
}

// Rank 0: starts the root on an interface the others can reach, and says where, or why not.
std::string startPmixRoot(LaunchEnv& env, std::chrono::milliseconds timeout,
                          std::unique_ptr<RootService>& root) {
  try {
    if (auto secretHex = envString("HOOP_SECRET")) {
      auto secret = Secret::fromHex(*secretHex);
      if (!secret) fail(hoopInvalidArgument, "HOOP_SECRET must be 32 hex digits");
      env.id.secret = *secret;
    } else {
      env.id.secret = Secret::random();
    }
    Secret tag = Secret::random();
    std::memcpy(&env.id.jobTag, tag.bytes.data(), sizeof(env.id.jobTag));
    env.id.authenticated = true;
    SocketAddress address = chooseListenAddress(nullptr);
    address.setPort(0);
    root = std::make_unique<RootService>(address, env.id, timeout);
    env.id.root = root->address();
    return str(env.id.secret.toHex(), ' ', env.id.jobTag, ' ', env.id.root.toString());
  } catch (const Error& e) {
    root.reset();
    return str("! ", e.what());
  }
}

void readPmixRoot(LaunchEnv& env, const std::string& key, const std::string& published) {
  if (published.rfind("! ", 0) == 0) {
    fail(hoopRemoteError, "hoopCommInitFromEnv (PMIx): rank 0 could not start the rendezvous: ",
         published.substr(2));
  }
  std::istringstream fields(published);
  std::string secretHex;
  std::string rootText;
  uint64_t jobTag = 0;
  fields >> secretHex >> jobTag >> rootText;
  auto secret = Secret::fromHex(secretHex);
  if (!fields || !secret) {
    fail(hoopRemoteError, "hoopCommInitFromEnv (PMIx): rank 0 published a malformed ", key, " (",
         published.size(), " bytes)");
  }
  env.id.secret = *secret;
  env.id.authenticated = true;
  env.id.jobTag = jobTag;
  env.id.root = SocketAddress::parse(rootText);
}

std::unique_ptr<RootService> startPmixRendezvous(LaunchEnv& env,
                                                 std::chrono::milliseconds timeout) {
  std::string why;
  std::unique_ptr<PmixClient> pmix = PmixClient::connect(why);
  if (pmix == nullptr) {
    if (env.launcher == "Slurm") {
      log(LogLevel::kInfo, LogSubsys::kInit, env.rank, "a PMIx server started this process but ",
          why, "; taking the Slurm step's first host instead");
      planSlurmStep(env);
      return startKnownRoot(env, timeout);
    }
    fail(hoopSystemError, "hoopCommInitFromEnv (", env.launcher,
         "): a PMIx server started this process but ", why,
         "; install libpmix (Debian: libpmix2) or set HOOP_ROOT_ADDR=host:port");
  }
  if (pmix->rank() != env.rank) {
    fail(hoopInvalidArgument, "hoopCommInitFromEnv: ", env.launcher, " says rank ", env.rank,
         " but PMIx says rank ", pmix->rank(), " of job ", pmix->jobName());
  }
  std::unique_ptr<RootService> root;
  const std::string key = pmixKey();
  if (env.rank == 0) {
    pmix->publish(key, startPmixRoot(env, timeout, root));
    if (root != nullptr) {
      log(LogLevel::kInfo, LogSubsys::kInit, env.rank, "rank 0 serves the rendezvous at ",
          env.id.root.toString(), ", published through PMIx to job ", pmix->jobName());
    }
  }
  // Rank 0 arrives here even when its root failed: the others learn why instead of waiting.
  pmix->fence();
  readPmixRoot(env, key, pmix->lookup(0, key));
  env.rootDetail = str("job ", pmix->jobName());
  logRoot(env);
  return root;
}

}  // namespace

const char* rootWayName(RootWay way) {
  switch (way) {
    case RootWay::kHoopRootAddr: return "HOOP_ROOT_ADDR";
    case RootWay::kMasterAddr: return "MASTER_ADDR/MASTER_PORT";
    case RootWay::kPmix: return "PMIx";
    case RootWay::kSlurmStep: return "the Slurm step's first host";
  }
  return "?";
}

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

  if (auto root = envString("HOOP_ROOT_ADDR")) {
    env.rootWay = RootWay::kHoopRootAddr;
    completeIdFromEnvironment(env, *root);
    env.rootListen = env.id.root;
  } else if (auto master = envString("MASTER_ADDR")) {
    long long port = envInt("MASTER_PORT", -1);
    if (port < 0 || port >= 65535) {
      fail(hoopInvalidArgument, "MASTER_ADDR is set but MASTER_PORT is missing or out of range");
    }
    env.rootWay = RootWay::kMasterAddr;
    completeIdFromEnvironment(env, str(withBrackets(*master), ':', port + 1));
    env.rootListen = env.id.root;
  } else if (pmixServerPresent()) {
    env.rootWay = RootWay::kPmix;
  } else if (env.launcher == "Slurm") {
    planSlurmStep(env);
  } else {
    fail(hoopInvalidArgument, "hoopCommInitFromEnv (", env.launcher,
         "): no way to the root: no PMIx server started this process (PMIX_NAMESPACE is not "
         "set); set HOOP_ROOT_ADDR=host:port (a port rank 0 can listen on) or MASTER_ADDR and "
         "MASTER_PORT");
  }
  return env;
}

std::unique_ptr<RootService> startLaunchRoot(LaunchEnv& env, std::chrono::milliseconds timeout) {
  if (env.rootWay == RootWay::kPmix) return startPmixRendezvous(env, timeout);
  return startKnownRoot(env, timeout);
}

}  // namespace hoop
