// hoopConfig_t and hoopCommInitRankConfig: every field checked and named when wrong, the
// config's timeout winning over HOOP_TIMEOUT, and non-blocking communicators across real
// processes (hoop_config_worker) over shared memory and TCP.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"
#include "hoop/hoop.hpp"
#include "process_runner.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;

// Initialises one rank with `config` and expects hoopInvalidArgument whose message has `names`.
void expectRejected(hoopConfig_t config, const std::string& names) {
  hoopUniqueId id{};  // never used: the config is checked first
  hoopComm_t comm = reinterpret_cast<hoopComm_t>(&id);
  EXPECT_EQ(hoopCommInitRankConfig(&comm, 1, id, 0, &config), hoopInvalidArgument) << names;
  EXPECT_EQ(comm, nullptr);
  const std::string message = hoopGetLastError(nullptr);
  EXPECT_NE(message.find(names), std::string::npos) << message;
}

TEST(ConfigValidation, EveryBadFieldIsNamed) {
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.blocking = 2;
  expectRejected(config, "config.blocking");
  config = HOOP_CONFIG_INITIALIZER;
  config.timeoutSeconds = -1;
  expectRejected(config, "config.timeoutSeconds");
  config = HOOP_CONFIG_INITIALIZER;
  config.initTimeoutSeconds = -5;
  expectRejected(config, "config.initTimeoutSeconds");
  for (int streams : {0, 65}) {
    config = HOOP_CONFIG_INITIALIZER;
    config.socketStreams = streams;
    expectRejected(config, "config.socketStreams");
  }
  config = HOOP_CONFIG_INITIALIZER;
  config.algorithms = "allreduce:=nosuchschedule";
  expectRejected(config, "config.algorithms");
  config = HOOP_CONFIG_INITIALIZER;
  config.version = HOOP_VERSION_CODE + 1;
  expectRejected(config, "config.version");
}

TEST(ConfigValidation, AnUninitialisedStructSaysToUseTheInitializer) {
  hoopConfig_t config;
  std::memset(&config, 0xa5, sizeof(config));
  expectRejected(config, "HOOP_CONFIG_INITIALIZER");
  config = HOOP_CONFIG_INITIALIZER;
  config.size = sizeof(hoopConfig_t) - 8;  // a struct from some other layout
  expectRejected(config, "HOOP_CONFIG_INITIALIZER");
}

TEST(ConfigValidation, NullOutputPointer) {
  hoopUniqueId id{};
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  EXPECT_EQ(hoopCommInitRankConfig(nullptr, 1, id, 0, &config), hoopInvalidArgument);
}

// NULL config and an untouched HOOP_CONFIG_INITIALIZER are both plain hoopCommInitRank.
TEST(Config, NullAndDefaultConfigAreBlockingInit) {
  for (bool useNull : {true, false}) {
    hoopUniqueId id;
    ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
    hoopComm_t comm = nullptr;
    ASSERT_EQ(hoopCommInitRankConfig(&comm, 1, id, 0, useNull ? nullptr : &config), hoopSuccess)
        << hoopGetLastError(nullptr);
    int32_t value = 21;
    int32_t result = 0;
    EXPECT_EQ(hoopAllReduce(&value, &result, 1, hoopInt32, hoopSum, comm, nullptr), hoopSuccess);
    EXPECT_EQ(result, 21);
    hoopResult_t state = hoopInProgress;
    EXPECT_EQ(hoopCommGetAsyncError(comm, &state), hoopSuccess);
    EXPECT_EQ(state, hoopSuccess);
    EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
  }
}

// HOOP_TIMEOUT says a minute; the config says one second, and wins.
TEST(Config, TimeoutOverridesTheEnvironment) {
  setenv("HOOP_TIMEOUT", "60", 1);
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  std::promise<void> rankZeroDone;
  std::thread rankOne([&] {
    hoopComm_t comm = nullptr;
    ASSERT_EQ(hoopCommInitRank(&comm, 2, id, 1), hoopSuccess) << hoopGetLastError(nullptr);
    rankZeroDone.get_future().wait();  // never calls the allreduce
    hoopCommDestroy(comm);
  });
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.timeoutSeconds = 1;
  hoopComm_t comm = nullptr;
  ASSERT_EQ(hoopCommInitRankConfig(&comm, 2, id, 0, &config), hoopSuccess)
      << hoopGetLastError(nullptr);
  float value = 1;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, comm, nullptr), hoopTimeout)
      << hoopGetLastError(comm);
  const auto took = std::chrono::steady_clock::now() - start;
  const std::string message = hoopGetLastError(comm);
  EXPECT_NE(message.find("timed out after 1 s"), std::string::npos) << message;
  // A hang guard: the environment's 60 s would have run past it.
  EXPECT_LT(took, std::chrono::seconds(30));
  rankZeroDone.set_value();
  EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
  rankOne.join();
  unsetenv("HOOP_TIMEOUT");
}

// config.algorithms wins over HOOP_ALGO; an unset field leaves HOOP_ALGO in force. Ranks whose
// rules differ (one set config.algorithms, the other left HOOP_ALGO in force) fail to initialise,
// both of them, naming the setting (core/agreed_settings.h).
TEST(Config, AlgorithmsOverrideTheEnvironment) {
  setenv("HOOP_ALGO", "allreduce:=tree", 1);
  // Two ranks in threads, rank r with config.algorithms = rules[r] (null: unset); each rank's
  // choice at 1 MiB, or its initialisation's error.
  const auto run = [](const std::array<const char*, 2>& rules) {
    hoopUniqueId id;
    EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    std::array<std::string, 2> outcome;
    std::vector<std::thread> ranks;
    for (int rank = 0; rank < 2; ++rank) {
      ranks.emplace_back([&, rank] {
        hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
        if (rules[rank] != nullptr) config.algorithms = rules[rank];
        hoopComm_t comm = nullptr;
        if (hoopCommInitRankConfig(&comm, 2, id, rank, &config) != hoopSuccess) {
          outcome[rank] = hoopGetLastError(nullptr);
          return;
        }
        const char* chosen = nullptr;
        EXPECT_EQ(hoopCommScheduleName(comm, hoopCollAllReduce, 1 << 20, hoopFloat32, &chosen),
                  hoopSuccess);
        outcome[rank] = chosen;
        EXPECT_EQ(hoopCommDestroy(comm), hoopSuccess);
      });
    }
    for (auto& rank : ranks) rank.join();
    return outcome;
  };
  EXPECT_EQ(run({"allreduce:=direct", "allreduce:=direct"}),
            (std::array<std::string, 2>{"direct", "direct"}));
  // hoop's own choice at 4 MiB is the ring.
  EXPECT_EQ(run({nullptr, nullptr}), (std::array<std::string, 2>{"tree", "tree"}));
  for (const std::string& error : run({"allreduce:=direct", nullptr})) {
    EXPECT_NE(error.find("runs with another HOOP_ALGO (or config->algorithms) than rank 0"),
              std::string::npos)
        << error;
  }
  unsetenv("HOOP_ALGO");
}

// The config's initialisation timeout (1 s) bounds a wait for a rank that never comes, where
// HOOP_INIT_TIMEOUT's would be 300 s.
TEST(Config, InitTimeoutOverridesTheEnvironment) {
  setenv("HOOP_INIT_TIMEOUT", "300", 1);
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.initTimeoutSeconds = 1;
  hoopComm_t comm = nullptr;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(hoopCommInitRankConfig(&comm, 2, id, 0, &config), hoopTimeout)
      << hoopGetLastError(nullptr);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));  // hang guard
  EXPECT_EQ(comm, nullptr);
  EXPECT_NE(std::string(hoopGetLastError(nullptr)).find("rendezvous"), std::string::npos)
      << hoopGetLastError(nullptr);
  unsetenv("HOOP_INIT_TIMEOUT");
}

// The C++ API: a non-blocking communicator of one rank, wait() and typed calls.
TEST(Config, CppNonBlockingCommunicator) {
  hoopConfig_t config = hoop::defaultConfig();
  config.blocking = 0;
  hoop::Communicator comm(1, hoop::UniqueId::create(), 0, config);
  comm.wait();
  EXPECT_EQ(comm.size(), 1);
  std::vector<int32_t> data = {1, 2, 3};
  comm.allReduce(std::span<int32_t>(data));
  std::vector<int32_t> received(3, 0);
  hoop::group([&] {
    comm.send(std::span<const int32_t>(data), 0);
    comm.recv(std::span<int32_t>(received), 0);
  });
  comm.wait();
  EXPECT_EQ(data, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(received, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_TRUE(comm.ready());
  // A bad argument still throws at once.
  EXPECT_THROW(comm.broadcast(std::span<int32_t>(data), 5), hoop::Exception);
}

std::vector<ProcessResult> runWorkers(int nranks, int started, const std::string& mode,
                                      Env env = {}) {
  hoopUniqueId id;
  EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  ProcessGroup group;
  for (int r = 0; r < started; ++r) {
    Env rankEnv = env;
    rankEnv["HOOP_TEST_UID"] = toHex(id);
    rankEnv["HOOP_TEST_RANK"] = std::to_string(r);
    rankEnv["HOOP_TEST_NRANKS"] = std::to_string(nranks);
    group.start({HOOP_CONFIG_WORKER, mode}, rankEnv);
  }
  return group.wait(std::chrono::seconds(60));
}

void expectAllPassed(const std::vector<ProcessResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 0) << "rank " << r << " output:\n" << results[r].output;
    if (results[r].status == 0) {
      EXPECT_NE(results[r].output.find("OK rank"), std::string::npos) << results[r].output;
    }
  }
}

class NonBlocking : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(NonBlocking, QueuedCollectivesGroupsAndBarriersAreExact) {
  auto [transport, nranks] = GetParam();
  expectAllPassed(runWorkers(nranks, nranks, "loop", {{"HOOP_TRANSPORT", transport}}));
}

INSTANTIATE_TEST_SUITE_P(Transports, NonBlocking,
                         ::testing::Combine(::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 3)));

TEST(NonBlockingFailure, MismatchedCountsSurfaceThroughGetAsyncError) {
  expectAllPassed(runWorkers(2, 2, "mismatch"));
}

TEST(NonBlockingFailure, ADeadPeerSurfacesThroughGetAsyncError) {
  expectAllPassed(runWorkers(2, 2, "deadpeer"));
}

// Shows how long the aborts took (the workers print it): for reading, not asserted.
void showAbortTimes(const std::vector<ProcessResult>& results) {
  for (const ProcessResult& result : results) {
    const size_t at = result.output.find("abort ");
    if (at != std::string::npos) std::printf("%s", result.output.substr(at).c_str());
  }
}

TEST(NonBlockingAbort, StopsAQueuedOperationAndLeavesNoThread) {
  auto results = runWorkers(2, 2, "abort");
  expectAllPassed(results);
  showAbortTimes(results);
}

TEST(NonBlockingAbort, StopsAnInitialisationWaitingForAMissingRank) {
  auto results = runWorkers(2, 1, "abortinit");
  expectAllPassed(results);
  showAbortTimes(results);
}

}  // namespace
}  // namespace hoop::test
