// Where one rank's traffic and buffers should live: the NIC to listen on and the NUMA node for
// the shared-memory slots it receives into, decided from the topology (topology/affinity.h) at
// communicator creation.
#pragma once

#include <string>

namespace hoop {

struct RankAffinity {
  std::string nicInterface;  // the network interface to prefer; empty: no preference
  int numaNode = -1;         // the node to place received slots on; -1: leave it to the kernel
  std::string summary;       // what was decided and why, for the INFO log; empty when nothing
};

// Reads the topology only when a decision depends on it: when HOOP_TOPO_FILE names one, when the
// machine has several NUMA nodes, or when HOOP_SOCKET_IFNAME leaves the NIC to hoop. Never
// throws: a topology that cannot be read leaves everything to the defaults (and says so).
RankAffinity planRankAffinity();

}  // namespace hoop
