// NIC choice and NUMA binding on the fixture machines, and on small hand-built topologies for the
// corner cases the fixtures do not have.
#include "topology/affinity.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "test_support.h"

namespace hoop {
namespace {

const Topology& hgx() {
  static const Topology topology = loadTopologyFile(test::fixture("hgx_2socket_8gpu_8nic.xml"));
  return topology;
}

const Topology& twoSpeed() {
  static const Topology topology = loadTopologyFile(test::fixture("dual_socket_2nic_socket0.xml"));
  return topology;
}

std::string nicOf(const Topology& topology, const RankPlacement& placement, int localRank) {
  std::optional<size_t> nic = chooseNic(topology, placement, localRank);
  return nic ? topology.nics[*nic].label() : "none";
}

// On the HGX box each GPU shares a PCIe switch with one NIC: whatever its local rank, a rank
// takes that NIC.
TEST(ChooseNic, GpuTakesTheNicOnItsSwitch) {
  for (size_t gpu = 0; gpu < 8; ++gpu) {
    for (int localRank : {0, 3, static_cast<int>(gpu), 7}) {
      EXPECT_EQ(nicOf(hgx(), {gpu, std::nullopt}, localRank), "ib" + std::to_string(gpu))
          << "GPU " << gpu << ", local rank " << localRank;
    }
  }
}

// Without its own NIC, GPU 0 takes the one behind the same host bridge (ib1, fewest bridges
// away) over ib2/ib3, which are only on the same NUMA node.
TEST(ChooseNic, FewerBridgesBeatSameNumaNode) {
  Topology topology = hgx();
  topology.nics.erase(topology.nics.begin());
  for (int localRank = 0; localRank < 4; ++localRank) {
    EXPECT_EQ(nicOf(topology, {0, std::nullopt}, localRank), "ib1");
  }
  // Without ib0 and ib1, the two on socket 0 are equally close: local ranks alternate.
  topology.nics.erase(topology.nics.begin());
  EXPECT_EQ(nicOf(topology, {0, std::nullopt}, 0), "ib2");
  EXPECT_EQ(nicOf(topology, {0, std::nullopt}, 1), "ib3");
  EXPECT_EQ(nicOf(topology, {0, std::nullopt}, 2), "ib2");
}

// With socket 0's NICs gone, a GPU there spreads over socket 1's four by local rank.
TEST(ChooseNic, RemoteNicsSpreadByLocalRank) {
  Topology topology = hgx();
  topology.nics.erase(topology.nics.begin(), topology.nics.begin() + 4);
  for (int localRank = 0; localRank < 8; ++localRank) {
    EXPECT_EQ(nicOf(topology, {1, std::nullopt}, localRank),
              "ib" + std::to_string(4 + localRank % 4));
  }
}

// No GPU: the NICs on the NUMA node of the PU the rank runs on, local rank i taking the
// (i % 4)-th of them.
TEST(ChooseNic, CpuRanksSpreadOverTheirNodesNics) {
  for (int localRank = 0; localRank < 8; ++localRank) {
    EXPECT_EQ(nicOf(hgx(), {std::nullopt, 0u}, localRank), "ib" + std::to_string(localRank % 4));
    // PU 48: the hyperthread of core 0 on socket 1.
    EXPECT_EQ(nicOf(hgx(), {std::nullopt, 48u}, localRank),
              "ib" + std::to_string(4 + localRank % 4));
  }
}

TEST(ChooseNic, NothingKnownSpreadsOverAll) {
  for (int localRank = 0; localRank < 16; ++localRank) {
    EXPECT_EQ(nicOf(hgx(), {}, localRank), "ib" + std::to_string(localRank % 8));
  }
}

// Both NICs are on socket 0: equally close to any core there, equally far from socket 1. The
// 100 GbE one wins either way, for every local rank, though the 10 GbE one comes first on PCI.
TEST(ChooseNic, FasterLinkAmongEquallyClose) {
  for (unsigned pu : {0u, 5u, 12u, 47u}) {
    for (int localRank = 0; localRank < 4; ++localRank) {
      EXPECT_EQ(nicOf(twoSpeed(), {std::nullopt, pu}, localRank), "ens1f0np0") << "PU " << pu;
    }
  }
  EXPECT_EQ(nicOf(twoSpeed(), {}, 1), "ens1f0np0");
}

// A closer NIC wins over a faster one farther away.
TEST(ChooseNic, CloserBeatsFaster) {
  Topology topology = twoSpeed();
  topology.nics[1].numaNode = 1;
  EXPECT_EQ(nicOf(topology, {std::nullopt, 0u}, 0), "eno1");
  EXPECT_EQ(nicOf(topology, {std::nullopt, 12u}, 0), "ens1f0np0");
}

TEST(ChooseNic, SingleNicAndNoNic) {
  Topology workstation = loadTopologyFile(test::fixture("workstation_1socket_1nic.xml"));
  for (int localRank = 0; localRank < 3; ++localRank) {
    EXPECT_EQ(nicOf(workstation, {std::nullopt, 7u}, localRank), "enp5s0");
  }
  workstation.nics.clear();
  EXPECT_EQ(chooseNic(workstation, {}, 0), std::nullopt);
}

TEST(ChooseNic, BadPlacementIsInvalidArgument) {
  try {
    chooseNic(hgx(), {8, std::nullopt}, 0);
    FAIL() << "GPU 8 accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("GPU 8 does not exist"), std::string::npos);
  }
  EXPECT_THROW(chooseNic(hgx(), {}, -1), Error);
}

TEST(ChooseNumaNode, GpuThenNicThenCpu) {
  // The GPU's node wins, even over the NIC's and the CPU's.
  EXPECT_EQ(chooseNumaNode(hgx(), {5, 0u}, size_t{0}), 1);
  EXPECT_EQ(chooseNumaNode(hgx(), {2, std::nullopt}, std::nullopt), 0);
  // No GPU: the NIC's node, even when the rank runs on the other socket (PU 12 is on node 1).
  EXPECT_EQ(chooseNumaNode(twoSpeed(), {std::nullopt, 12u}, size_t{1}), 0);
  // Neither: the node of the PU it runs on.
  EXPECT_EQ(chooseNumaNode(twoSpeed(), {std::nullopt, 12u}, std::nullopt), 1);
  EXPECT_EQ(chooseNumaNode(twoSpeed(), {}, std::nullopt), kUnknownIndex);
}

TEST(ChooseNumaNode, UnknownLocalityFallsThrough) {
  Topology topology = hgx();
  topology.gpus[3].numaNode = kUnknownIndex;
  topology.nics[6].numaNode = kUnknownIndex;
  EXPECT_EQ(chooseNumaNode(topology, {3, std::nullopt}, size_t{5}), 1);
  EXPECT_EQ(chooseNumaNode(topology, {3, 0u}, size_t{6}), 0);
  EXPECT_EQ(chooseNumaNode(topology, {3, std::nullopt}, size_t{6}), kUnknownIndex);
  EXPECT_THROW(chooseNumaNode(topology, {}, size_t{8}), Error);
}

// The whole chain on the HGX box, as the communicator will use it: local rank i drives GPU i,
// sends through NIC i, and binds to that pair's socket.
TEST(Affinity, EightRanksOnTheHgxBox) {
  for (int localRank = 0; localRank < 8; ++localRank) {
    RankPlacement placement{static_cast<size_t>(localRank), std::nullopt};
    std::optional<size_t> nic = chooseNic(hgx(), placement, localRank);
    ASSERT_EQ(nic, static_cast<size_t>(localRank));
    EXPECT_EQ(chooseNumaNode(hgx(), placement, nic), localRank < 4 ? 0 : 1);
  }
}

}  // namespace
}  // namespace hoop
