// Where hoopCommInitFromEnv finds rank, size and the root: hooprun, OpenMPI, Slurm, torchrun.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/bootstrap.h"

namespace hoop {

// How the ranks of a job agree on the root's address, in order of precedence.
enum class RootWay {
  kHoopRootAddr,  // HOOP_ROOT_ADDR=host:port (hooprun sets it)
  kMasterAddr,    // MASTER_ADDR and MASTER_PORT, torchrun's
  kPmix,          // rank 0 publishes the root and the secret through the launcher's PMIx server
  kSlurmStep,     // the Slurm step's first host, on a port derived from the job and step ids
};

// "HOOP_ROOT_ADDR", "PMIx", ...: how logs and messages name the way.
const char* rootWayName(RootWay way);

struct LaunchEnv {
  int rank = -1;
  int size = -1;
  std::string launcher;        // which variables supplied rank and size, for messages
  int launcherLocalRank = -1;  // what the launcher says (-1: nothing); hoop computes its own
  RootWay rootWay = RootWay::kHoopRootAddr;
  // Where rank 0's root service listens: the root address itself, or under the Slurm fallback
  // every interface on the derived port (the step's first host may name any of them).
  SocketAddress rootListen;
  std::string rootDetail;  // how the root was derived, for the log and for errors
  // Root address, secret (or none), job tag. Under PMIx only after startLaunchRoot.
  BootstrapId id;
};

// Reads the environment and decides the way to the root; it talks to nothing. A missing or
// malformed variable is hoopInvalidArgument naming it.
// The root address is HOOP_ROOT_ADDR (host:port), else MASTER_ADDR with MASTER_PORT + 1 (the
// port itself belongs to torch's own store under torchrun), else through PMIx when a PMIx server
// started the process, else, when Slurm supplied the rank, the step's first host.
LaunchEnv readLaunchEnv();

// Completes `env` and starts rank 0's root service, which it returns (nullptr on other ranks).
// Under PMIx every rank takes part: rank 0 publishes the root and the job secret, the others
// read them after a fence. Where the PMIx library is missing under Slurm, the Slurm fallback
// is taken instead. The INFO log names the way used.
std::unique_ptr<RootService> startLaunchRoot(LaunchEnv& env, std::chrono::milliseconds timeout);

// The local rank a launcher announced (the first of its variables that is set), -1 when none:
// a hint for choices made before the rendezvous has counted the ranks of each host.
int launcherLocalRankHint();

}  // namespace hoop
