// The hand-written hwloc XML fixtures load in hwloc itself, and hoop's model reads them right:
// counts, NUMA locality of every GPU and NIC, PCI ids, link speeds, cache sharing.
#include <gtest/gtest.h>
#include <hwloc.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "test_support.h"
#include "topology/hwloc_handle.h"
#include "topology/topology.h"

namespace hoop {
namespace {

constexpr size_t kGiB = size_t{1} << 30;
constexpr size_t kMiB = size_t{1} << 20;

const char* const kFixtures[] = {"hgx_2socket_8gpu_8nic.xml", "workstation_1socket_1nic.xml",
                                 "dual_socket_2nic_socket0.xml"};

// hwloc alone, without hoop's reader: each fixture is XML hwloc accepts, and the load really
// came from the file (a failed set_xml would quietly fall back to this machine).
TEST(TopologyFixtures, LoadInHwlocItself) {
  const int kPus[] = {64, 32, 48};
  for (size_t i = 0; i < std::size(kFixtures); ++i) {
    SCOPED_TRACE(kFixtures[i]);
    hwloc_topology_t raw = nullptr;
    ASSERT_EQ(hwloc_topology_init(&raw), 0);
    // Destroyed even when an assertion below returns early.
    std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> owner(raw, hwloc_topology_destroy);
    hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    ASSERT_EQ(hwloc_topology_set_xml(raw, test::fixture(kFixtures[i]).c_str()), 0);
    ASSERT_EQ(hwloc_topology_load(raw), 0);
    EXPECT_FALSE(hwloc_topology_is_thissystem(raw));
    EXPECT_EQ(hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PU), kPus[i]);
    EXPECT_GT(hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PCI_DEVICE), 0);
  }
}

std::vector<std::string> nicNames(const Topology& topology) {
  std::vector<std::string> names;
  for (const Nic& nic : topology.nics) names.push_back(nic.name + "/" + nic.rdmaDevice);
  return names;
}

size_t countCaches(const Topology& topology, unsigned level, CacheKind kind) {
  size_t count = 0;
  for (const CpuCache& cache : topology.caches) count += cache.level == level && cache.kind == kind;
  return count;
}

TEST(TopologyFixtures, HgxServerShape) {
  Topology topology = loadTopologyFile(test::fixture("hgx_2socket_8gpu_8nic.xml"));
  ASSERT_EQ(topology.packages.size(), 2u);
  EXPECT_EQ(topology.packages[1].osIndex, 1u);
  EXPECT_EQ(topology.packages[0].cpuModel, "Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz");
  ASSERT_EQ(topology.numaNodes.size(), 2u);
  for (unsigned n = 0; n < 2; ++n) {
    EXPECT_EQ(topology.numaNodes[n].osIndex, n);
    EXPECT_EQ(topology.numaNodes[n].package, static_cast<int>(n));
    EXPECT_EQ(topology.numaNodes[n].memoryBytes, 256 * kGiB);
  }

  ASSERT_EQ(topology.cores.size(), 32u);
  EXPECT_EQ(topology.cores[0].pus, (std::vector<unsigned>{0, 32}));
  // Core ids restart on every socket: the 17th core is core 0 of package 1.
  EXPECT_EQ(topology.cores[16].osIndex, 0u);
  EXPECT_EQ(topology.cores[16].package, 1);
  EXPECT_EQ(topology.cores[16].numaNode, 1);
  EXPECT_EQ(topology.cores[16].pus, (std::vector<unsigned>{16, 48}));
  EXPECT_EQ(topology.numaNodeOfPu(47), 0);
  EXPECT_EQ(topology.numaNodeOfPu(48), 1);
  EXPECT_EQ(topology.numaNodeOfPu(64), kUnknownIndex);

  EXPECT_EQ(countCaches(topology, 3, CacheKind::kUnified), 2u);
  EXPECT_EQ(countCaches(topology, 2, CacheKind::kUnified), 32u);
  EXPECT_EQ(countCaches(topology, 1, CacheKind::kData), 32u);
  EXPECT_EQ(countCaches(topology, 1, CacheKind::kInstruction), 32u);
  for (const CpuCache& cache : topology.caches) {
    if (cache.level != 3) {
      EXPECT_EQ(cache.cores.size(), 1u);
      continue;
    }
    EXPECT_EQ(cache.bytes, 24 * kMiB);
    ASSERT_EQ(cache.cores.size(), 16u);
    int package = topology.cores[cache.cores[0]].package;
    for (size_t core : cache.cores) EXPECT_EQ(topology.cores[core].package, package);
  }

  // Eight A100s; the BMC's ASPEED VGA on socket 0 is not one of them.
  ASSERT_EQ(topology.gpus.size(), 8u);
  ASSERT_EQ(topology.nics.size(), 8u);
  const char* const kGpuBus[] = {"0000:13:00.0", "0000:23:00.0", "0000:33:00.0", "0000:43:00.0",
                                 "0000:93:00.0", "0000:a3:00.0", "0000:b3:00.0", "0000:c3:00.0"};
  const char* const kNicBus[] = {"0000:14:00.0", "0000:24:00.0", "0000:34:00.0", "0000:44:00.0",
                                 "0000:94:00.0", "0000:a4:00.0", "0000:b4:00.0", "0000:c4:00.0"};
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE("pair " + std::to_string(i));
    const Gpu& gpu = topology.gpus[i];
    const Nic& nic = topology.nics[i];
    int socket = i < 4 ? 0 : 1;
    EXPECT_EQ(gpu.pciBusId, kGpuBus[i]);
    EXPECT_EQ(gpu.name, "NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(gpu.numaNode, socket);
    EXPECT_EQ(nic.name, "ib" + std::to_string(i));
    EXPECT_EQ(nic.rdmaDevice, "mlx5_" + std::to_string(i));
    EXPECT_EQ(nic.speedMbps, 200000u);
    EXPECT_EQ(nic.numaNode, socket);
    EXPECT_EQ(nic.pciBusId, kNicBus[i]);
    // Host bridge, root port, switch upstream port, switch downstream port: the first three
    // are shared with the paired GPU and no other.
    ASSERT_EQ(gpu.pciPath.size(), 4u);
    ASSERT_EQ(nic.pciPath.size(), 4u);
    EXPECT_TRUE(std::equal(gpu.pciPath.begin(), gpu.pciPath.begin() + 3, nic.pciPath.begin()));
    EXPECT_NE(gpu.pciPath[3], nic.pciPath[3]);
  }
}

TEST(TopologyFixtures, WorkstationShape) {
  Topology topology = loadTopologyFile(test::fixture("workstation_1socket_1nic.xml"));
  ASSERT_EQ(topology.packages.size(), 1u);
  EXPECT_EQ(topology.packages[0].cpuModel, "AMD Ryzen 9 5950X 16-Core Processor");
  ASSERT_EQ(topology.numaNodes.size(), 1u);
  EXPECT_EQ(topology.numaNodes[0].memoryBytes, 64 * kGiB);
  ASSERT_EQ(topology.cores.size(), 16u);
  EXPECT_EQ(topology.cores[15].pus, (std::vector<unsigned>{15, 31}));
  EXPECT_TRUE(topology.gpus.empty());

  // Two CCDs: each L3 is shared by 8 cores, and together they cover all 16 once.
  std::vector<size_t> l3Cores;
  for (const CpuCache& cache : topology.caches) {
    if (cache.level != 3) continue;
    EXPECT_EQ(cache.bytes, 32 * kMiB);
    EXPECT_EQ(cache.cores.size(), 8u);
    l3Cores.insert(l3Cores.end(), cache.cores.begin(), cache.cores.end());
  }
  std::sort(l3Cores.begin(), l3Cores.end());
  std::vector<size_t> all(16);
  for (size_t i = 0; i < 16; ++i) all[i] = i;
  EXPECT_EQ(l3Cores, all);

  ASSERT_EQ(topology.nics.size(), 1u);
  EXPECT_EQ(topology.nics[0].name, "enp5s0");
  EXPECT_EQ(topology.nics[0].rdmaDevice, "");
  EXPECT_EQ(topology.nics[0].label(), "enp5s0");
  EXPECT_EQ(topology.nics[0].speedMbps, 1000u);
  EXPECT_EQ(topology.nics[0].numaNode, 0);
  EXPECT_EQ(topology.nics[0].pciBusId, "0000:05:00.0");
}

TEST(TopologyFixtures, TwoSpeedNicsOnSocketZero) {
  Topology topology = loadTopologyFile(test::fixture("dual_socket_2nic_socket0.xml"));
  EXPECT_EQ(topology.packages.size(), 2u);
  EXPECT_EQ(topology.numaNodes.size(), 2u);
  EXPECT_EQ(topology.cores.size(), 24u);
  EXPECT_TRUE(topology.gpus.empty());
  EXPECT_EQ(nicNames(topology), (std::vector<std::string>{"eno1/", "ens1f0np0/mlx5_0"}));
  EXPECT_EQ(topology.nics[0].speedMbps, 10000u);
  EXPECT_EQ(topology.nics[1].speedMbps, 100000u);
  EXPECT_EQ(topology.nics[0].pciBusId, "0000:17:00.0");
  EXPECT_EQ(topology.nics[1].pciBusId, "0000:4b:00.0");
  for (const Nic& nic : topology.nics) EXPECT_EQ(nic.numaNode, 0) << nic.label();
}

}  // namespace
}  // namespace hoop
