// hoop-topo's default output: the topology as an indented tree, machine -> packages -> NUMA nodes
// -> cores, with shared caches, GPUs and NICs under the NUMA node they are local to.
#pragma once

#include <string>

#include "topology/topology.h"

namespace hoop {

std::string topologyTree(const Topology& topology);

}  // namespace hoop
