// Which NIC a rank sends through and which NUMA node its progress thread and buffers live on.
// Pure functions of the topology and of where the rank runs, so every choice can be tested
// against fixture machines.
#pragma once

#include <cstddef>
#include <optional>

#include "topology/topology.h"

namespace hoop {

// Where a rank runs, as far as it knows.
struct RankPlacement {
  std::optional<size_t> gpu;   // position in Topology::gpus of the GPU it drives
  std::optional<unsigned> pu;  // OS index of the PU it runs on (sched_getcpu())
};

// The rank's NIC, as a position in topology.nics; nullopt when the machine has none.
// Closest wins. With a GPU: a NIC sharing PCI bridges with it (fewest bridges between them:
// same PCIe switch first), then one on the GPU's NUMA node, then on its package. Without: a NIC
// on the NUMA node of the PU it runs on, then on its package. Among the equally close, the
// fastest link (unknown speed counts as slowest); among those, local rank i takes the
// (i % count)-th in PCI order, so the ranks of one host spread over equal NICs.
// Throws hoopInvalidArgument for a GPU position out of range or a negative local rank.
std::optional<size_t> chooseNic(const Topology& topology, const RankPlacement& placement,
                                int localRank);

// The NUMA node (OS index) to bind the rank's progress work and buffers to: its GPU's, else its
// NIC's (a position in topology.nics, as chooseNic returns), else that of the PU it runs on;
// kUnknownIndex when none of them is known. Throws hoopInvalidArgument for a GPU or NIC
// position out of range. Memory near the device that reads it saves a hop
// over the socket interconnect on every transfer.
int chooseNumaNode(const Topology& topology, const RankPlacement& placement,
                   std::optional<size_t> nic);

}  // namespace hoop
