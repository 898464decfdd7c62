// How hoopCommInitFromEnv finds the root without a hoop variable: Slurm's hostlist grammar, the
// port a Slurm step derives, and which way wins when several are offered.
#include "core/launch_env.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/slurm_step.h"
#include "scoped_env.h"

namespace hoop {
namespace {

using test::ScopedEnv;
using Hosts = std::vector<std::string>;

TEST(SlurmHostlist, PlainNamesAndRanges) {
  EXPECT_EQ(expandSlurmHostlist("login1"), Hosts({"login1"}));
  EXPECT_EQ(expandSlurmHostlist("a,b,c"), Hosts({"a", "b", "c"}));
  EXPECT_EQ(expandSlurmHostlist("node[1-3]"), Hosts({"node1", "node2", "node3"}));
  // Each range is as wide as its own lower bound, as in Slurm's parser.
  EXPECT_EQ(expandSlurmHostlist("node[01-03,7,08],gpu-a5"),
            Hosts({"node01", "node02", "node03", "node7", "node08", "gpu-a5"}));
  EXPECT_EQ(expandSlurmHostlist("n[8-11]"), Hosts({"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(expandSlurmHostlist("n[098-101]"), Hosts({"n098", "n099", "n100", "n101"}));
}

TEST(SlurmHostlist, SuffixesAndSeveralGroupsMultiplyOut) {
  EXPECT_EQ(expandSlurmHostlist("rack[1-2]-node[01-02]"),
            Hosts({"rack1-node01", "rack1-node02", "rack2-node01", "rack2-node02"}));
  EXPECT_EQ(expandSlurmHostlist("c[3,1]-ib,x"), Hosts({"c3-ib", "c1-ib", "x"}));
  EXPECT_EQ(expandSlurmHostlist("node[5]"), Hosts({"node5"}));
}

TEST(SlurmHostlist, MalformedListsAreRefusedQuotingThem) {
  for (const char* bad : {"", "node[1-3", "node1-3]", "node[3-1]", "node[a-b]", "node[]",
                          "node[1-2,]", "a,,b", "node[[1]]", "node [1-2]", "n[1-2000000]"}) {
    try {
      expandSlurmHostlist(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), hoopInvalidArgument) << bad;
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(SlurmRendezvousPort, StaysInItsRangeAndKeepsNeighbouringStepsApart) {
  EXPECT_EQ(slurmRendezvousPort(0, 0), 20000);
  EXPECT_EQ(slurmRendezvousPort(1, 2), 20018);
  EXPECT_EQ(slurmRendezvousPort(798, 0), 20000);  // the period: 798 jobs of 16 steps
  std::set<uint16_t> seen;
  for (uint64_t job = 4000000; job < 4000000 + 798; ++job) {
    for (uint64_t step = 0; step < 16; ++step) {
      uint16_t port = slurmRendezvousPort(job, step);
      EXPECT_GE(port, 20000);
      EXPECT_LE(port, 32767);
      EXPECT_TRUE(seen.insert(port).second) << "job " << job << " step " << step;
    }
  }
}

// A clean slate of every variable readLaunchEnv looks at, then the ones a case sets.
class LaunchEnvTest : public ::testing::Test {
 protected:
  void set(const std::string& name, const std::string& value) {
    scoped_.push_back(std::make_unique<ScopedEnv>(name, value));
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> clean_ = [] {
    std::vector<std::unique_ptr<ScopedEnv>> unset;
    for (const char* name : {"HOOP_RANK",
                             "HOOP_SIZE",
                             "HOOP_LOCAL_RANK",
                             "HOOP_ROOT_ADDR",
                             "HOOP_SECRET",
                             "OMPI_COMM_WORLD_RANK",
                             "OMPI_COMM_WORLD_SIZE",
                             "OMPI_COMM_WORLD_LOCAL_RANK",
                             "SLURM_PROCID",
                             "SLURM_NTASKS",
                             "SLURM_LOCALID",
                             "SLURM_STEP_NODELIST",
                             "SLURM_JOB_ID",
                             "SLURM_STEP_ID",
                             "SLURMD_NODENAME",
                             "RANK",
                             "WORLD_SIZE",
                             "LOCAL_RANK",
                             "MASTER_ADDR",
                             "MASTER_PORT",
                             "PMIX_NAMESPACE",
                             "PMIX_RANK"}) {
      unset.push_back(std::make_unique<ScopedEnv>(name, std::nullopt));
    }
    return unset;
  }();
  std::vector<std::unique_ptr<ScopedEnv>> scoped_;

 protected:
  void slurmStep(const std::string& rank) {
    set("SLURM_PROCID", rank);
    set("SLURM_NTASKS", "4");
    set("SLURM_STEP_NODELIST", "127.0.0.[1-2]");
    set("SLURM_JOB_ID", "41");
    set("SLURM_STEP_ID", "3");
  }
  void pmixServer() {
    set("PMIX_NAMESPACE", "job-7");
    set("PMIX_RANK", "1");
  }
};

TEST_F(LaunchEnvTest, HoopRootAddrWinsOverEveryOtherWay) {
  slurmStep("1");
  pmixServer();
  set("MASTER_ADDR", "127.0.0.9");
  set("MASTER_PORT", "29500");
  set("HOOP_ROOT_ADDR", "127.0.0.5:4000");
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.rootWay, RootWay::kHoopRootAddr);
  EXPECT_EQ(env.id.root.toString(), "127.0.0.5:4000");
  EXPECT_EQ(env.launcher, "Slurm");
  EXPECT_EQ(env.rank, 1);
}

TEST_F(LaunchEnvTest, MasterAddrWinsOverPmixAndSlurm) {
  slurmStep("1");
  pmixServer();
  set("MASTER_ADDR", "127.0.0.9");
  set("MASTER_PORT", "29500");
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.rootWay, RootWay::kMasterAddr);
  EXPECT_EQ(env.id.root.toString(), "127.0.0.9:29501");
}

TEST_F(LaunchEnvTest, PmixWinsOverTheSlurmFallback) {
  slurmStep("1");
  pmixServer();
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.rootWay, RootWay::kPmix);
  EXPECT_STREQ(rootWayName(env.rootWay), "PMIx");
}

TEST_F(LaunchEnvTest, SlurmFallbackTakesTheFirstHostAndTheDerivedPort) {
  slurmStep("2");
  LaunchEnv env = readLaunchEnv();
  EXPECT_EQ(env.rootWay, RootWay::kSlurmStep);
  EXPECT_EQ(env.id.root.toString(), "127.0.0.1:" + std::to_string(slurmRendezvousPort(41, 3)));
  EXPECT_EQ(env.rootListen.toString(), "0.0.0.0:" + std::to_string(slurmRendezvousPort(41, 3)));
  EXPECT_FALSE(env.id.authenticated);
  // Another step of the same job has its own port and job tag.
  LaunchEnv first = env;
  set("SLURM_STEP_ID", "4");
  LaunchEnv next = readLaunchEnv();
  EXPECT_NE(next.id.root.port(), first.id.root.port());
  EXPECT_NE(next.id.jobTag, first.id.jobTag);
}

TEST_F(LaunchEnvTest, SlurmFallbackNamesAMissingVariable) {
  slurmStep("0");
  set("SLURM_JOB_ID", "x41");
  try {
    readLaunchEnv();
    ADD_FAILURE() << "a malformed SLURM_JOB_ID was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_JOB_ID='x41'"), std::string::npos) << e.what();
  }
}

TEST_F(LaunchEnvTest, SlurmVariablesDoNotServeAnotherLaunchersRanks) {
  // mpirun inside a Slurm allocation without PMIx: the batch step's node list says nothing of
  // mpirun's job, so it is not used.
  slurmStep("0");
  set("OMPI_COMM_WORLD_RANK", "0");
  set("OMPI_COMM_WORLD_SIZE", "2");
  try {
    readLaunchEnv();
    ADD_FAILURE() << "OpenMPI ranks took the Slurm step's root";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("(OpenMPI): no way to the root"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("HOOP_ROOT_ADDR"), std::string::npos) << e.what();
  }
}

TEST_F(LaunchEnvTest, SlurmPortTakenIsAClearError) {
  slurmStep("0");
  LaunchEnv env = readLaunchEnv();
  // The port held by another listener on this host, as another program would.
  auto holder = std::make_unique<RootService>(env.rootListen, env.id, std::chrono::seconds(5));
  try {
    auto root = startLaunchRoot(env, std::chrono::seconds(5));
    ADD_FAILURE() << "rank 0 served on a taken port";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("cannot serve the rendezvous on port " +
                           std::to_string(slurmRendezvousPort(41, 3))),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("job 41 step 3"), std::string::npos) << message;
    EXPECT_NE(message.find("HOOP_ROOT_ADDR"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace hoop
