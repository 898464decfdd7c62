// The built hoop-topo binary against the fixtures: JSON that Python's json module reads with the
// expected counts, a tree that shows GPUs and NICs where they are, the --hosts plan, and its exit
// statuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "test_support.h"

namespace hoop {
namespace {

// Debian's interpreter, not whatever python3 comes first on PATH: only the standard library is
// needed, and it is always at this path where the hoop build dependencies are installed.
constexpr const char* kPython = "/usr/bin/python3";

test::RunResult topo(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), HOOP_TOPO_BINARY);
  return test::run(args, env);
}

std::map<std::string, std::string> withFile(const std::string& fixture) {
  return {{"HOOP_TOPO_FILE", test::fixture(fixture)}};
}

// Runs a Python snippet with the JSON document in a file named by sys.argv[1]; returns its stdout.
std::string python(const std::string& code, const std::string& json) {
  test::ScratchDir scratch;
  std::string path = scratch.write("doc.json", json);
  test::RunResult result = test::run({kPython, "-c", code, path});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  return result.out;
}

class HoopTopoBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is not installed";
  }
};

TEST_F(HoopTopoBinary, JsonOfTheHgxFixture) {
  test::RunResult result = topo({"--json"}, withFile("hgx_2socket_8gpu_8nic.xml"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  std::string summary = python(
      "import json, sys\n"
      "d = json.load(open(sys.argv[1]))\n"
      "print(len(d['packages']), len(d['numa_nodes']), len(d['cores']),\n"
      "      sum(len(c['pus']) for c in d['cores']), len(d['gpus']), len(d['nics']))\n"
      "print(','.join(str(g['numa_node']) for g in d['gpus']))\n"
      "print(','.join(str(n['numa_node']) for n in d['nics']))\n"
      "print(','.join(n['name'] + '/' + n['rdma_device'] + '/' + str(n['speed_mbps'])\n"
      "               for n in d['nics'][:2]))\n"
      "print(d['gpus'][7]['pci_bus_id'], d['gpus'][7]['name'])\n"
      "print(sorted({(c['level'], c['type']) for c in d['caches']}))\n"
      "print(d['numa_nodes'][1]['memory_bytes'], d['machine']['source'].endswith('.xml'))\n",
      result.out);
  EXPECT_EQ(summary,
            "2 2 32 64 8 8\n"
            "0,0,0,0,1,1,1,1\n"
            "0,0,0,0,1,1,1,1\n"
            "ib0/mlx5_0/200000,ib1/mlx5_1/200000\n"
            "0000:c3:00.0 NVIDIA A100-SXM4-80GB\n"
            "[(1, 'data'), (1, 'instruction'), (2, 'unified'), (3, 'unified')]\n"
            "274877906944 True\n");
}

TEST_F(HoopTopoBinary, JsonOfTheWorkstationHasNoGpuAndNullForUnknowns) {
  test::RunResult result = topo({"--json"}, withFile("workstation_1socket_1nic.xml"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(python("import json, sys\n"
                   "d = json.load(open(sys.argv[1]))\n"
                   "print(len(d['cores']), len(d['gpus']), d['nics'][0]['name'],\n"
                   "      d['nics'][0]['speed_mbps'], repr(d['nics'][0]['rdma_device']))\n",
                   result.out),
            "16 0 enp5s0 1000 ''\n");
}

// GPUs and NICs print under the NUMA node they are local to, with PCI ids and speeds.
TEST(HoopTopoTree, ShowsGpusAndNicsUnderTheirNumaNode) {
  test::RunResult result = topo({}, withFile("hgx_2socket_8gpu_8nic.xml"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  const std::string& tree = result.out;
  size_t node1 = tree.find("\n    NUMA node 1  256 GiB\n");
  ASSERT_NE(node1, std::string::npos) << tree;
  for (const char* line : {"      GPU 0  0000:13:00.0  NVIDIA A100-SXM4-80GB\n",
                           "      NIC ib3 (mlx5_3)  0000:44:00.0  200 Gb/s\n"}) {
    size_t at = tree.find(line);
    EXPECT_NE(at, std::string::npos) << line << tree;
    EXPECT_LT(at, node1) << line;
  }
  for (const char* line : {"      GPU 7  0000:c3:00.0  NVIDIA A100-SXM4-80GB\n",
                           "      NIC ib4 (mlx5_4)  0000:94:00.0  200 Gb/s\n"}) {
    size_t at = tree.find(line);
    EXPECT_NE(at, std::string::npos) << line << tree;
    EXPECT_GT(at, node1) << line;
  }
  EXPECT_NE(tree.find("  package 1  Intel(R) Xeon(R) Gold 6326 CPU @ 2.90GHz\n"),
            std::string::npos);
  EXPECT_NE(tree.find("      L3 24 MiB  shared by 16 cores (PUs 16-31,48-63)\n"),
            std::string::npos);
  EXPECT_NE(tree.find("      core 15  PUs 31,63  L2 1.25 MiB, L1d 48 KiB, L1i 32 KiB\n"),
            std::string::npos);
  EXPECT_EQ(tree.find("ASPEED"), std::string::npos);
}

TEST(HoopTopoTree, LiveMachine) {
  test::RunResult result = topo({});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(result.out.rfind("machine ", 0), 0u) << result.out;
  EXPECT_NE(result.out.find("(topology: live)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NUMA node "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("core "), std::string::npos) << result.out;
}

TEST(HoopTopoPlan, RingOrderAndTransports) {
  test::RunResult result = topo({"--hosts", "b,a,b,a", "--rank", "3", "--gpu", "6"},
                                withFile("hgx_2socket_8gpu_8nic.xml"));
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_NE(result.out.find("ring order: 0 2 1 3\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("rank 3 (host a): local rank 1 of 2\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("to rank 0 (host b): tcp\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("to rank 1 (host a): shm\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("to rank 3 (host a): self\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NIC ib6 (mlx5_6)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("NUMA node 1\n"), std::string::npos) << result.out;
}

TEST(HoopTopoPlan, HoopTransportSteersAndFails) {
  test::RunResult excluded =
      topo({"--hosts", "a,a,b", "--rank", "0"}, {{"HOOP_TRANSPORT", "^shm"}});
  ASSERT_EQ(excluded.exitCode, 0) << excluded.err;
  EXPECT_NE(excluded.out.find("to rank 1 (host a): tcp\n"), std::string::npos) << excluded.out;

  test::RunResult forced = topo({"--hosts", "a,a,b", "--rank", "0"}, {{"HOOP_TRANSPORT", "shm"}});
  EXPECT_EQ(forced.exitCode, 1);
  EXPECT_NE(forced.out.find("to rank 1 (host a): shm\n"), std::string::npos) << forced.out;
  EXPECT_NE(forced.out.find("to rank 2 (host b): error: HOOP_TRANSPORT='shm'"), std::string::npos)
      << forced.out;

  test::RunResult unknown =
      topo({"--hosts", "a,b", "--rank", "0"}, {{"HOOP_TRANSPORT", "carrier-pigeon"}});
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_NE(unknown.err.find("unknown transport 'carrier-pigeon'"), std::string::npos)
      << unknown.err;
}

TEST_F(HoopTopoBinary, PlanAsJson) {
  test::RunResult result =
      topo({"--json", "--hosts", "x,y,x", "--rank", "1"}, {{"HOOP_TRANSPORT", "tcp"}});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(python("import json, sys\n"
                   "d = json.load(open(sys.argv[1]))\n"
                   "print(d['ring'], [h['name'] for h in d['hosts']], d['rank']['local_size'],\n"
                   "      [t['transport'] for t in d['rank']['transports']])\n",
                   result.out),
            "[0, 2, 1] ['x', 'y'] 1 ['tcp', 'self', 'tcp']\n");
}

TEST(HoopTopoErrors, MissingTopoFile) {
  test::RunResult result = topo({}, {{"HOOP_TOPO_FILE", "/nonexistent/topo.xml"}});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_NE(result.err.find("HOOP_TOPO_FILE: cannot read topology file '/nonexistent/topo.xml'"),
            std::string::npos)
      << result.err;
}

TEST(HoopTopoErrors, BadUsageExitsTwo) {
  for (std::vector<std::string> args : {std::vector<std::string>{"--bogus"},
                                        {"--rank", "0"},
                                        {"--hosts"},
                                        {"--hosts", "a,,b"},
                                        {"--hosts", "a,b", "--rank", "2"},
                                        {"--hosts", "a", "--rank", "-1"},
                                        {"--hosts", "a", "--gpu", "0"},
                                        {"--json=yes"}}) {
    test::RunResult result = topo(args);
    EXPECT_EQ(result.exitCode, 2) << args[0];
    EXPECT_NE(result.err.find("usage: hoop-topo"), std::string::npos) << result.err;
    EXPECT_EQ(result.out, "");
  }
  test::RunResult help = topo({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("HOOP_TOPO_FILE"), std::string::npos);
}

}  // namespace
}  // namespace hoop
