// Where the topology comes from: HOOP_TOPO_FILE (and its errors), or this machine.
#include <gtest/gtest.h>

#include "base/error.h"
#include "base/logging.h"
#include "core/bootstrap.h"
#include "test_support.h"
#include "topology/topology.h"

namespace hoop {
namespace {

std::string discoveryError(const std::string& topoFile) {
  test::ScopedEnv env("HOOP_TOPO_FILE", topoFile);
  try {
    discoverTopology();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    return error.what();
  }
  ADD_FAILURE() << "HOOP_TOPO_FILE=" << topoFile << " accepted";
  return "";
}

TEST(Discovery, MissingTopoFileIsAClearError) {
  test::ScratchDir scratch;
  std::string path = scratch.path() + "/no-such-topology.xml";
  std::string message = discoveryError(path);
  EXPECT_NE(message.find("HOOP_TOPO_FILE"), std::string::npos) << message;
  EXPECT_NE(message.find("cannot read topology file '" + path + "'"), std::string::npos) << message;
  EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
}

TEST(Discovery, UnparsableTopoFileIsAClearError) {
  test::ScratchDir scratch;
  for (const char* text : {"not xml at all", "<?xml version=\"1.0\"?><topology version=\"2.0\">",
                           "<?xml version=\"1.0\"?><topology version=\"2.0\"></topology>", ""}) {
    std::string path = scratch.write("bad.xml", text);
    std::string message = discoveryError(path);
    EXPECT_NE(message.find("'" + path + "' is not a valid hwloc XML topology"), std::string::npos)
        << text << ": " << message;
  }
}

TEST(Discovery, TopoFileReplacesTheLiveMachine) {
  std::string path = test::fixture("hgx_2socket_8gpu_8nic.xml");
  test::ScopedEnv env("HOOP_TOPO_FILE", path);
  Topology topology = discoverTopology();
  EXPECT_EQ(topology.machine.source, path);
  EXPECT_EQ(topology.gpus.size(), 8u);
  EXPECT_EQ(topology.cores.size(), 32u);
  // The hardware comes from the file; the identity is still this host's.
  EXPECT_EQ(topology.machine.hostName, localHostName());
  EXPECT_EQ(topology.machine.hostId, localHostId());
}

// Whatever this machine is, hwloc finds a core and a NUMA node on it, every core has a PU, and
// every PU's NUMA node is one that exists.
TEST(Discovery, LiveMachine) {
  test::ScopedEnv env("HOOP_TOPO_FILE", std::nullopt);
  Topology topology = discoverTopology();
  EXPECT_EQ(topology.machine.source, "live");
  EXPECT_EQ(topology.machine.hostId, localHostId());
  EXPECT_FALSE(topology.machine.hostName.empty());
  ASSERT_GE(topology.cores.size(), 1u);
  ASSERT_GE(topology.numaNodes.size(), 1u);
  for (const NumaNode& node : topology.numaNodes) EXPECT_GT(node.memoryBytes, 0u);
  for (const CpuCore& core : topology.cores) {
    ASSERT_FALSE(core.pus.empty());
    int node = topology.numaNodeOfPu(core.pus[0]);
    bool exists = false;
    for (const NumaNode& candidate : topology.numaNodes) {
      exists |= static_cast<int>(candidate.osIndex) == node;
    }
    EXPECT_TRUE(exists || node == kUnknownIndex) << "PU " << core.pus[0] << " on node " << node;
  }
  for (const Nic& nic : topology.nics) EXPECT_FALSE(nic.label().empty());
}

}  // namespace
}  // namespace hoop
