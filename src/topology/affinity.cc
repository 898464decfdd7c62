#include "topology/affinity.h"

#include <algorithm>
#include <compare>
#include <vector>

#include "base/error.h"

namespace hoop {
namespace {

// How far a NIC is from where the rank's data lives; smaller is closer.
enum class Reach { kSharedPciBridge, kSameNumaNode, kSamePackage, kElsewhere };

struct Distance {
  Reach reach = Reach::kElsewhere;
  size_t bridgeHops = 0;  // with kSharedPciBridge: bridges crossed from one device to the other
  auto operator<=>(const Distance&) const = default;
};

Distance cpuSideDistance(const Topology& topology, int fromNode, int nicNode) {
  if (fromNode == kUnknownIndex || nicNode == kUnknownIndex) return {};
  if (fromNode == nicNode) return {Reach::kSameNumaNode};
  int package = topology.packageOfNumaNode(fromNode);
  if (package != kUnknownIndex && package == topology.packageOfNumaNode(nicNode)) {
    return {Reach::kSamePackage};
  }
  return {};
}

Distance gpuToNic(const Topology& topology, const Gpu& gpu, const Nic& nic) {
  size_t shared = 0;
  while (shared < gpu.pciPath.size() && shared < nic.pciPath.size() &&
         gpu.pciPath[shared] == nic.pciPath[shared]) {
    ++shared;
  }
  // Peer traffic between devices below a common bridge never reaches the CPU; the fewer bridges
  // between them, the closer (siblings on one PCIe switch are 2 hops apart).
  if (shared > 0) {
    return {Reach::kSharedPciBridge, gpu.pciPath.size() + nic.pciPath.size() - 2 * shared};
  }
  return cpuSideDistance(topology, gpu.numaNode, nic.numaNode);
}

void checkGpu(const Topology& topology, const RankPlacement& placement) {
  if (placement.gpu && *placement.gpu >= topology.gpus.size()) {
    fail(hoopInvalidArgument, "GPU ", *placement.gpu, " does not exist: this machine has ",
         topology.gpus.size(), " GPUs");
  }
}

}  // namespace

std::optional<size_t> chooseNic(const Topology& topology, const RankPlacement& placement,
                                int localRank) {
  if (localRank < 0) fail(hoopInvalidArgument, "local rank ", localRank, " is negative");
  checkGpu(topology, placement);
  if (topology.nics.empty()) return std::nullopt;

  int cpuNode = placement.pu ? topology.numaNodeOfPu(*placement.pu) : kUnknownIndex;
  auto distanceTo = [&](const Nic& nic) {
    if (placement.gpu) return gpuToNic(topology, topology.gpus[*placement.gpu], nic);
    return cpuSideDistance(topology, cpuNode, nic.numaNode);
  };

  Distance best = distanceTo(topology.nics[0]);
  for (const Nic& nic : topology.nics) best = std::min(best, distanceTo(nic));
  uint64_t fastest = 0;
  for (const Nic& nic : topology.nics) {
    if (distanceTo(nic) == best) fastest = std::max(fastest, nic.speedMbps);
  }
  std::vector<size_t> candidates;
  for (size_t i = 0; i < topology.nics.size(); ++i) {
    if (distanceTo(topology.nics[i]) == best && topology.nics[i].speedMbps == fastest) {
      candidates.push_back(i);
    }
  }
  return candidates[static_cast<size_t>(localRank) % candidates.size()];
}

int chooseNumaNode(const Topology& topology, const RankPlacement& placement,
                   std::optional<size_t> nic) {
  checkGpu(topology, placement);
  if (nic && *nic >= topology.nics.size()) {
    fail(hoopInvalidArgument, "NIC ", *nic, " does not exist: this machine has ",
         topology.nics.size(), " NICs");
  }
  if (placement.gpu) {
    int node = topology.gpus[*placement.gpu].numaNode;
    if (node != kUnknownIndex) return node;
  }
  if (nic) {
    int node = topology.nics[*nic].numaNode;
    if (node != kUnknownIndex) return node;
  }
  if (placement.pu) return topology.numaNodeOfPu(*placement.pu);
  return kUnknownIndex;
}

}  // namespace hoop
