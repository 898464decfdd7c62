#include "core/rank_affinity.h"

#include <sched.h>

#include "base/env.h"
#include "base/error.h"
#include "core/launch_env.h"
#include "topology/affinity.h"
#include "topology/memory_binding.h"

namespace hoop {

RankAffinity planRankAffinity() {
  RankAffinity plan;
  const bool nicIsOurs = !envString("HOOP_SOCKET_IFNAME");
  if (!envString("HOOP_TOPO_FILE") && onlineNumaNodes() < 2 && !nicIsOurs) return plan;
  try {
    const Topology topology = discoverTopology();
    RankPlacement placement;
    const int pu = sched_getcpu();
    if (pu >= 0) placement.pu = static_cast<unsigned>(pu);
    // Before the rendezvous only the launcher knows the local rank; it only spreads ranks over
    // equally close NICs, so a missing hint costs balance, not correctness.
    const int localRank = std::max(0, launcherLocalRankHint());
    const std::optional<size_t> nic = chooseNic(topology, placement, localRank);
    plan.numaNode = chooseNumaNode(topology, placement, nic);
    if (nic && nicIsOurs) plan.nicInterface = topology.nics[*nic].name;
    plan.summary = str("runs on PU ", pu, ", NUMA node ",
                       plan.numaNode < 0 ? std::string("unknown") : std::to_string(plan.numaNode),
                       nic ? ", closest NIC " + topology.nics[*nic].label() : ", no NIC found",
                       nicIsOurs ? "" : " (HOOP_SOCKET_IFNAME chooses the interface)");
  } catch (const Error& e) {
    plan = {};
    plan.summary = str("topology unavailable, placement left to the kernel: ", e.what());
  }
  return plan;
}

}  // namespace hoop
