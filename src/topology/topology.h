// What hoop knows about one machine: a plain-value model filled from hwloc 2.x. Everything that
// decides something from it (host_ranks.h, affinity.h, link_speed.h) is a pure function of
// these values, so tests feed it from hand-written XML fixtures or build one field by field.
//
// Numbering: NUMA nodes, packages and PUs are named by their OS index (what numactl, taskset and
// /sys use). Core OS indices repeat across packages on Linux (core 0 of every socket), so caches
// refer to cores by their position in Topology::cores instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hoop {

// A NUMA node or package reference that hwloc could not pin down (an I/O device attached above
// several NUMA nodes, a core on a machine without Package objects).
constexpr int kUnknownIndex = -1;

struct Machine {
  std::string hostName;  // localHostName(): HOOP_HOSTNAME when set
  uint64_t hostId = 0;   // localHostId(): ranks with equal ids share a host
  std::string source;    // "live", or the XML file it was loaded from
};

struct CpuPackage {
  unsigned osIndex = 0;
  std::string cpuModel;  // hwloc's CPUModel info; empty when unknown
};

struct NumaNode {
  unsigned osIndex = 0;
  int package = kUnknownIndex;  // OS index of the package that holds it
  size_t memoryBytes = 0;       // memory local to this node
};

struct CpuCore {
  unsigned osIndex = 0;
  int package = kUnknownIndex;
  int numaNode = kUnknownIndex;
  std::vector<unsigned> pus;  // OS indices of its hardware threads, ascending
};

enum class CacheKind { kUnified, kData, kInstruction };

struct CpuCache {
  unsigned level = 0;  // 1, 2, 3
  CacheKind kind = CacheKind::kUnified;
  size_t bytes = 0;
  std::vector<size_t> cores;  // positions in Topology::cores of the cores that share it
};

// One network adapter port (one PCI function). hwloc may show it as a network interface, an RDMA
// device or both (ib0 and mlx5_0 are the same port).
struct Nic {
  std::string name;        // network interface (eth0, ib0); empty when it has only an RDMA device
  std::string rdmaDevice;  // verbs device (mlx5_0); empty when none
  uint64_t speedMbps = 0;  // link speed; 0 when unknown
  int numaNode = kUnknownIndex;
  std::string pciBusId;  // "0000:18:00.0"; empty when not on PCI
  // hwloc ids of the PCI bridges above it, host bridge first: two devices that share a prefix
  // share those bridges (a PCIe switch). Meaningful only within one Topology.
  std::vector<uint64_t> pciPath;

  // How messages and the tool name it: the interface, else the RDMA device.
  const std::string& label() const { return name.empty() ? rdmaDevice : name; }
};

// A compute GPU (NVIDIA or AMD display/3D controller, or anything hwloc reports as a
// co-processor). BMC display chips (ASPEED) are not GPUs.
struct Gpu {
  std::string pciBusId;
  std::string name;  // "NVIDIA A100-SXM4-80GB" when hwloc knows the model, else the PCI ids
  int numaNode = kUnknownIndex;
  std::vector<uint64_t> pciPath;  // as Nic::pciPath
};

// Order: packages and NUMA nodes by OS index; cores in hwloc's order (package by package); NICs
// and GPUs by PCI bus id (so GPU i is CUDA device i under CUDA_DEVICE_ORDER=PCI_BUS_ID).
struct Topology {
  Machine machine;
  std::vector<CpuPackage> packages;
  std::vector<NumaNode> numaNodes;
  std::vector<CpuCore> cores;
  std::vector<CpuCache> caches;
  std::vector<Nic> nics;
  std::vector<Gpu> gpus;

  // The NUMA node of the core that owns PU `pu`; kUnknownIndex when there is no such PU.
  int numaNodeOfPu(unsigned pu) const;
  // The package of NUMA node `numaNode`; kUnknownIndex when unknown.
  int packageOfNumaNode(int numaNode) const;
};

// The topology hoop works with: the XML file named by HOOP_TOPO_FILE when set, else the live
// machine. Throws hoop::Error (hoopInvalidArgument for a bad file, hoopSystemError when hwloc
// fails on the live machine); never crashes.
Topology discoverTopology();

// Live discovery of this machine, with I/O devices (NICs, GPUs) and their link speeds from /sys.
Topology discoverLiveTopology();

// Loads an hwloc 2.x XML export (lstopo --of xml). NIC speeds come only from the file (a
// LinkSpeedMbps info on the OS device or its PCI device): /sys describes this machine, not the
// one in the file.
Topology loadTopologyFile(const std::string& path);

}  // namespace hoop
