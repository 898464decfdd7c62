#include "topology/topology.h"

#include <mutex>
#include <optional>

#include "base/env.h"
#include "base/logging.h"
#include "topology/hwloc_handle.h"
#include "topology/hwloc_reader.h"

namespace hoop {

// core/bootstrap.h's, declared here rather than included: topology sits below core.
uint64_t localHostId();

namespace {

// The host identity is always this process's, even for a topology read from a file: ranks group
// by it, and the file only says what the hardware looks like.
Topology withThisMachine(Topology topology, std::string source) {
  topology.machine.hostName = localHostName();
  topology.machine.hostId = localHostId();
  topology.machine.source = std::move(source);
  log(LogLevel::kInfo, LogSubsys::kInit, -1, "topology (", topology.machine.source,
      "): ", topology.packages.size(), " packages, ", topology.numaNodes.size(), " NUMA nodes, ",
      topology.cores.size(), " cores, ", topology.nics.size(), " NICs, ", topology.gpus.size(),
      " GPUs");
  return topology;
}

}  // namespace

int Topology::numaNodeOfPu(unsigned pu) const {
  for (const CpuCore& core : cores) {
    for (unsigned candidate : core.pus) {
      if (candidate == pu) return core.numaNode;
    }
  }
  return kUnknownIndex;
}

int Topology::packageOfNumaNode(int numaNode) const {
  for (const NumaNode& node : numaNodes) {
    if (static_cast<int>(node.osIndex) == numaNode) return node.package;
  }
  return kUnknownIndex;
}

// The machine is read once per process and the copy kept: the hardware does not change while a
// job runs, and a job may create a communicator per phase or per test. Each read walks sysfs and
// the PCI bus (milliseconds), and hwloc's PCI backend leaks about 1 KiB of device-name strings
// inside libpciaccess per read: 1 MiB over 1,000 communicators, measured with heaptrack.
// (hwloc drops the PUs a cgroup cpuset forbids, not those outside this thread's affinity mask,
// so a later change of binding does not make the copy stale.)
Topology discoverLiveTopology() {
  static std::mutex mutex;
  static std::optional<Topology> machine;
  std::lock_guard<std::mutex> lock(mutex);
  if (!machine) {
    HwlocTopology hwloc;
    hwloc.loadLive();
    machine = withThisMachine(readHwlocTopology(hwloc.get(), /*readSysfsSpeeds=*/true), "live");
  }
  return *machine;
}

Topology loadTopologyFile(const std::string& path) {
  HwlocTopology hwloc;
  hwloc.loadXml(path);
  return withThisMachine(readHwlocTopology(hwloc.get(), /*readSysfsSpeeds=*/false), path);
}

Topology discoverTopology() {
  if (auto path = envString("HOOP_TOPO_FILE")) {
    try {
      return loadTopologyFile(*path);
    } catch (const Error& error) {
      // Name the variable: the user may not know where the path came from.
      fail(error.code(), "HOOP_TOPO_FILE: ", error.what());
    }
  }
  return discoverLiveTopology();
}

}  // namespace hoop
