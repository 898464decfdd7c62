// Where hoopCommInitFromEnv finds rank, size and the root: hooprun, OpenMPI, Slurm, torchrun.
#pragma once

#include <string>

#include "core/bootstrap.h"

namespace hoop {

struct LaunchEnv {
  int rank = -1;
  int size = -1;
  std::string launcher;        // which variables supplied rank and size, for messages
  int launcherLocalRank = -1;  // what the launcher says (-1: nothing); hoop computes its own
  BootstrapId id;              // root address, secret (or none), job tag
};

// Reads the environment; a missing or malformed variable is hoopInvalidArgument naming it.
// The root address is HOOP_ROOT_ADDR (host:port), else MASTER_ADDR with MASTER_PORT + 1 (the
// port itself belongs to torch's own store under torchrun).
LaunchEnv readLaunchEnv();

// The local rank a launcher announced (the first of its variables that is set), -1 when none:
// a hint for choices made before the rendezvous has counted the ranks of each host.
int launcherLocalRankHint();

}  // namespace hoop
