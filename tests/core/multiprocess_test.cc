// Collectives across real processes over real sockets: every collective, dtype, op, in-place and
// out-of-place, on 1..8 ranks, through each way of starting a job. (Each schedule forced on its own
// is tested with the algorithms, in tests/algorithms/schedules_test.cc.)
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "worker_job.h"

namespace hoop::test {
namespace {

class Ranks : public ::testing::TestWithParam<int> {};

TEST_P(Ranks, SweepEveryCollectiveDtypeOpAndCount) {
  // The million-element case runs at every rank count; it is the one that exercises pipelining.
  // Above five ranks out of place only: an in-place call differs from an out-of-place one in
  // where each rank's block starts, the same code at every rank count and checked at 1 to 5,
  // and with more ranks than cores every call costs several times more.
  std::vector<std::string> args = {"--suite", "sweep", "--large"};
  if (GetParam() > 5) args.push_back("--out-of-place");
  expectAllPassed(runWithUniqueId(GetParam(), args));
}

TEST_P(Ranks, RandomFloatsGiveBitwiseIdenticalResultsOnEveryRank) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "random"}));
}

TEST_P(Ranks, SendRecvGroups) { expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "p2p"})); }

TEST_P(Ranks, BarrierHoldsEveryoneUntilTheLastArrives) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "barrier"}));
}

INSTANTIATE_TEST_SUITE_P(OneToEight, Ranks, ::testing::Range(1, 9));

// On one host the small allreduces go one-shot through the eager buffers by default, and over
// tcp (no shared memory to read peers' inputs in place) they do not.
TEST(Algorithm, OneShotIsTheDefaultForSmallAllReducesOverShm) {
  for (const char* transport : {"shm", "tcp"}) {
    auto results = runWithUniqueId(
        3, {"--suite", "sweep", "--only", "allreduce"},
        {{"HOOP_TRANSPORT", transport}, {"HOOP_DEBUG", "INFO"}, {"HOOP_DEBUG_SUBSYS", "COLL"}});
    expectAllPassed(results);
    for (const auto& result : results) {
      const bool oneShot = result.output.find("allreduce uses one-shot") != std::string::npos;
      EXPECT_EQ(oneShot, std::string(transport) == "shm") << transport << ":\n" << result.output;
    }
  }
}

// Over shm a rank spreads its small messages along each slot when every local rank has a core of
// its own, and keeps them at the slot's start when ranks share cores (shm_options.h has the
// measurements); HOOP_SHM_SPREAD overrides both. Each case checks the data too (allreduce sweep).
TEST(ShmSpread, OnlyRanksWithACoreEachSpreadTheirMessages) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  int firstCpu = 0;
  while (!CPU_ISSET(firstCpu, &mask)) ++firstCpu;
  struct Case {
    bool oneCore;  // both ranks confined to one CPU (taskset)
    const char* spread;
    const char* expected;
  };
  std::vector<Case> cases = {
      {true, nullptr, "each message at its slot's start"},
      {true, "64K", "messages spread across each slot's first 64 KiB"},
  };
  if (CPU_COUNT(&mask) >= 2) {  // what the ranks inherit, so the union hoop counts
    cases.push_back({false, nullptr, "messages spread across each slot's first 512 KiB"});
  }
  for (const Case& c : cases) {
    hoopUniqueId id;
    ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    ProcessGroup group;
    for (int r = 0; r < 2; ++r) {
      Env env = {{"HOOP_TEST_UID", toHex(id)}, {"HOOP_TEST_RANK", std::to_string(r)},
                 {"HOOP_TEST_NRANKS", "2"},    {"HOOP_TRANSPORT", "shm"},
                 {"HOOP_DEBUG", "INFO"},       {"HOOP_DEBUG_SUBSYS", "INIT"}};
      if (c.spread != nullptr) env["HOOP_SHM_SPREAD"] = c.spread;
      std::vector<std::string> argv = {HOOP_TEST_WORKER, "--init", "uid",      "--suite",
                                       "sweep",          "--only", "allreduce"};
      if (c.oneCore) argv.insert(argv.begin(), {"taskset", "-c", std::to_string(firstCpu)});
      group.start(argv, env);
    }
    auto results = group.wait(std::chrono::seconds(120));
    expectAllPassed(results);
    for (size_t r = 0; r < results.size(); ++r) {
      EXPECT_NE(results[r].output.find(c.expected), std::string::npos)
          << "rank " << r << " (one core: " << c.oneCore << "):\n"
          << results[r].output;
    }
  }
}

// hoop's own choice (the cost model) is the same on every rank: each logs the same figures and
// the same schedules, first used at the same sizes. Twice per transport:
// - with the figures each rank measures at init, which the ranks must agree on. On a loaded
//   machine those may rightly price one schedule best at every size, so this run does not ask
//   for more than one;
// - with calibration off, where the default figures cross over between schedules within the
//   sweep (1 element to a million), so the ranks must also agree at the crossover, which the
//   shape's agreed values (ranks per CPU, cache size) move.
TEST(Algorithm, EveryRankMakesTheSameChoice) {
  for (const char* transport : {"tcp", "shm"}) {
    for (const bool calibrated : {true, false}) {
      auto results = runWithUniqueId(4, {"--suite", "sweep", "--only", "allreduce", "--large"},
                                     {{"HOOP_TRANSPORT", transport},
                                      {"HOOP_TUNE_CALIBRATE", calibrated ? "1" : "0"},
                                      {"HOOP_DEBUG", "INFO"},
                                      {"HOOP_DEBUG_SUBSYS", "COLL,TUNE"}});
      expectAllPassed(results);
      const std::string run = std::string(transport) + (calibrated ? ", calibrated" : ", defaults");
      std::vector<std::vector<std::string>> choices(results.size());
      for (size_t r = 0; r < results.size(); ++r) {
        std::istringstream lines(results[r].output);
        for (std::string line; std::getline(lines, line);) {
          for (const char* what : {"allreduce uses ", "cost model calibrated"}) {
            const size_t at = line.find(what);
            if (at != std::string::npos) choices[r].push_back(line.substr(at));
          }
        }
        EXPECT_EQ(choices[r], choices[0]) << run << ": rank " << r << " chose differently";
      }
      if (calibrated) {
        ASSERT_FALSE(choices[0].empty()) << run;
        EXPECT_NE(choices[0][0].find(std::string("cost model calibrated (slowest rank): ") +
                                     transport + " "),
                  std::string::npos)
            << run << ": " << choices[0][0];
        EXPECT_GE(choices[0].size(), 2u) << run << ": no schedule logged";
      } else {
        EXPECT_GE(choices[0].size(), 2u) << run << ": one schedule for every size";
      }
    }
  }
}

// hoop's timed choice (schedule_trial.h, HOOP_TUNE_TRIAL=1) over each transport: four ranks loop on
// 2 KiB sums (checked exactly every call) until that class has settled (at least a second, so the
// loop's 4-byte vote may settle too; however long a sanitizer build takes, up to the worker's
// bound). Every rank logs the same settlements in the same order, from the same agreed times, and
// each winner is the fastest of the times it logs or within the noise margin of it. With
// HOOP_TUNE_TRIAL=0 nothing is timed. The model keeps its default figures, which price several
// schedules within 2x of each other at 2 KiB; figures measured on a loaded machine may price one
// far ahead, leaving nothing to time. The watch stays off, as by default: with it, a class timed
// in a process's first second ran 2x faster 4096 calls later and was timed again (the watch's own
// test is DriftTimesASettledClassAgainOnEveryRank, below).
TEST(Algorithm, TimedChoiceSettlesAlikeOnEveryRank) {
  for (const char* transport : {"tcp", "shm"}) {
    auto results = runWithUniqueId(
        4, {"--suite", "loop", "--seconds", "1", "--count", "512", "--until-settled"},
        {{"HOOP_TRANSPORT", transport},
         {"HOOP_TUNE_TRIAL", "1"},
         {"HOOP_TUNE_CALIBRATE", "0"},
         {"HOOP_TUNE_WATCH", "0"},
         {"HOOP_DEBUG", "INFO"},
         {"HOOP_DEBUG_SUBSYS", "TUNE"}});
    expectAllPassed(results);
    std::vector<std::vector<std::string>> settled(results.size());
    for (size_t r = 0; r < results.size(); ++r) {
      std::istringstream lines(results[r].output);
      for (std::string line; std::getline(lines, line);) {
        const size_t at = line.find("allreduce of ");
        if (at != std::string::npos && line.find(" settled on ", at) != std::string::npos) {
          settled[r].push_back(line.substr(at));
        }
      }
      EXPECT_EQ(settled[r], settled[0]) << transport << ": rank " << r << " settled differently";
    }
    // The vote's class is timed too where the model prices two schedules close together there.
    ASSERT_GE(settled[0].size(), 1u) << transport << ": " << results[0].output;
    ASSERT_LE(settled[0].size(), 2u) << transport << ": " << results[0].output;
    EXPECT_EQ(settled[0][0].rfind("allreduce of 2048 to 4095 bytes settled on ", 0), 0u)
        << settled[0][0];
    if (settled[0].size() == 2) {
      EXPECT_EQ(settled[0][1].rfind("allreduce of 4 to 7 bytes settled on ", 0), 0u)
          << settled[0][1];
    }
    for (const std::string& line : settled[0]) {
      // "... settled on W (at B bytes; the figures: A 1.0 us (in a row), B 2.0 us; the model's
      // pick: A; ...)"
      const size_t nameAt = line.find(" settled on ") + 12;
      const std::string winner = line.substr(nameAt, line.find(" (at ", nameAt) - nameAt);
      ASSERT_NE(line.find("; the figures: "), std::string::npos) << line;
      const size_t listAt = line.find("; the figures: ") + 15;
      std::istringstream list(line.substr(listAt, line.find("; the model's pick") - listAt));
      double winnerUs = -1;
      double fastestUs = 1e300;
      for (std::string item; std::getline(list, item, ',');) {
        if (item.front() == ' ') item.erase(0, 1);
        const size_t unit = item.rfind(" us");
        const size_t space = item.rfind(' ', unit - 1);
        ASSERT_NE(unit, std::string::npos) << line;
        const double us = std::stod(item.substr(space + 1, unit - space - 1));
        if (item.substr(0, space) == winner) winnerUs = us;
        fastestUs = std::min(fastestUs, us);
      }
      ASSERT_GE(winnerUs, 0) << "the winner is not among the timed schedules: " << line;
      EXPECT_LE(winnerUs * 0.97, fastestUs) << line;
    }
  }
  auto results = runWithUniqueId(
      2, {"--suite", "loop", "--seconds", "0.2", "--count", "512"},
      {{"HOOP_TUNE_TRIAL", "0"}, {"HOOP_DEBUG", "INFO"}, {"HOOP_DEBUG_SUBSYS", "TUNE"}});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_EQ(result.output.find("settled on"), std::string::npos) << result.output;
  }
}

// Ranks that differ in a setting every rank must share (core/agreed_settings.h) fail to
// initialise, every one of them, naming the setting and the first rank that differs from rank 0:
// one rank of three watching its classes, forcing another allreduce schedule, allowing only TCP,
// or laying out its shm slots otherwise.
TEST(Algorithm, RanksWithDifferentSharedSettingsFailToInitialise) {
  struct Case {
    const char* name;
    const char* value;
    const char* named;
  };
  for (const Case& c : {Case{"HOOP_TUNE_WATCH", "64", "another HOOP_TUNE_WATCH than rank 0"},
                        Case{"HOOP_ALGO", "allreduce:=tree",
                             "another HOOP_ALGO (or config->algorithms) than rank 0"},
                        Case{"HOOP_TRANSPORT", "tcp", "another HOOP_TRANSPORT than rank 0"},
                        Case{"HOOP_SHM_SLOTS", "4", "another HOOP_SHM_SLOTS than rank 0"}}) {
    hoopUniqueId id;
    ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    ProcessGroup group;
    for (int r = 0; r < 3; ++r) {
      Env env = joining(id, r, 3);
      if (r == 2) env[c.name] = c.value;
      group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "hello"}, env);
    }
    auto results = group.wait(std::chrono::seconds(120));
    ASSERT_EQ(results.size(), 3u);
    for (size_t r = 0; r < results.size(); ++r) {
      EXPECT_NE(results[r].status, 0) << c.name << ": rank " << r << "\n" << results[r].output;
      EXPECT_NE(
          results[r].output.find("invalid usage: rank " + std::to_string(r) + ": rank 2 (host "),
          std::string::npos)
          << c.name << ": rank " << r << "\n"
          << results[r].output;
      EXPECT_NE(results[r].output.find(c.named), std::string::npos)
          << c.name << ": rank " << r << "\n"
          << results[r].output;
    }
  }
}

// The watch over a settled class (schedule_trial.h's kDriftFactor): once allreduces of 512 floats
// have settled, the last rank sleeps 20 ms before each call, which stretches the others' calls.
// Checked every 32 calls, the class is timed again after exactly 32 calls on every rank, each rank
// logs the same drift (agreed figures), and the class settles again. With HOOP_TUNE_WATCH=0 it
// stays settled through the same slow calls.
TEST(Algorithm, DriftTimesASettledClassAgainOnEveryRank) {
  const Env quiet = {{"HOOP_TUNE_TRIAL", "1"},
                     {"HOOP_TUNE_CALIBRATE", "0"},
                     {"HOOP_DEBUG", "INFO"},
                     {"HOOP_DEBUG_SUBSYS", "TUNE"}};
  const std::vector<std::string> args = {"--suite", "drift",         "--count",
                                         "512",     "--drift-calls", "96"};
  for (const char* transport : {"tcp", "shm"}) {
    Env env = quiet;
    env["HOOP_TRANSPORT"] = transport;
    env["HOOP_TUNE_WATCH"] = "32";
    auto results = runWithUniqueId(4, args, env);
    expectAllPassed(results);
    std::vector<std::string> drifts(results.size());
    for (size_t r = 0; r < results.size(); ++r) {
      const std::string& output = results[r].output;
      const std::string prefix = "DRIFT rank " + std::to_string(r) + ": ";
      EXPECT_NE(output.find(prefix + "timed again after 32 calls"), std::string::npos) << output;
      EXPECT_NE(output.find(prefix + "settled again"), std::string::npos) << output;
      std::istringstream lines(output);
      for (std::string line; std::getline(lines, line);) {
        const size_t at = line.find("allreduce of 2048 to 4095 bytes ran ");
        if (at != std::string::npos) drifts[r] += line.substr(at) + "\n";
      }
      EXPECT_EQ(drifts[r], drifts[0]) << transport << ": rank " << r << " saw another drift";
    }
    EXPECT_NE(drifts[0].find(" when it settled: timing its candidates again from the next call, "
                             "then watching every 64 calls\n"),
              std::string::npos)
        << transport << ": " << results[0].output;
  }
  Env off = quiet;
  off["HOOP_TRANSPORT"] = "shm";
  off["HOOP_TUNE_WATCH"] = "0";
  auto results = runWithUniqueId(2, args, off);
  expectAllPassed(results);
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_NE(results[r].output.find("DRIFT rank " + std::to_string(r) +
                                     ": still settled after 96 calls"),
              std::string::npos)
        << results[r].output;
  }
}

// Two-shot's slices follow the ranks per CPU (tuner.h), which every rank must agree on though
// each sees only its own affinity: four ranks bound in pairs (taskset) each report the same
// crowding, pick the same slices, and the forced two-shot sweep is exact.
TEST(Algorithm, RanksBoundApartAgreeOnTheirCrowding) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE && cpus.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  const std::string expected =
      cpus.size() == 2 ? "at most 2 rank(s) per CPU" : "at most 4 rank(s) per CPU";
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  ProcessGroup group;
  for (int r = 0; r < 4; ++r) {
    Env env = {{"HOOP_TEST_UID", toHex(id)},        {"HOOP_TEST_RANK", std::to_string(r)},
               {"HOOP_TEST_NRANKS", "4"},           {"HOOP_TRANSPORT", "shm"},
               {"HOOP_ALGO", "allreduce:=twoshot"}, {"HOOP_DEBUG", "INFO"},
               {"HOOP_DEBUG_SUBSYS", "INIT,COLL"}};
    group.start(
        {"taskset", "-c", std::to_string(cpus[static_cast<size_t>(r) / 2 % cpus.size()]),
         HOOP_TEST_WORKER, "--init", "uid", "--suite", "sweep", "--only", "allreduce", "--large"},
        env);
  }
  auto results = group.wait(std::chrono::seconds(240));
  expectAllPassed(results);
  std::vector<std::vector<std::string>> seen(results.size());
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_NE(results[r].output.find(expected), std::string::npos) << "rank " << r << ":\n"
                                                                   << results[r].output;
    std::istringstream lines(results[r].output);
    for (std::string line; std::getline(lines, line);) {
      const size_t at = line.find("allreduce uses two-shot");
      if (at != std::string::npos) seen[r].push_back(line.substr(at));
    }
    EXPECT_FALSE(seen[r].empty()) << "rank " << r << " never said which slices it used";
    EXPECT_EQ(seen[r], seen[0]) << "rank " << r << " sliced differently";
  }
}

// Figures given in the environment are kept as given by calibration (HOOP_TUNE_CALIBRATE=1);
// HOOP_TUNE_CALIBRATE=0 measures nothing.
TEST(Algorithm, CalibrationKeepsFiguresFromTheEnvironment) {
  auto results = runWithUniqueId(2, {"--suite", "barrier"},
                                 {{"HOOP_TUNE_CALIBRATE", "1"},
                                  {"HOOP_TUNE_SHM", "2,3"},
                                  {"HOOP_DEBUG", "INFO"},
                                  {"HOOP_DEBUG_SUBSYS", "TUNE"}});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_NE(result.output.find("calibrated (slowest rank): shm 2 us + 3 GB/s per step (from the "
                                 "environment); reduction "),
              std::string::npos)
        << result.output;
  }
  results = runWithUniqueId(
      2, {"--suite", "barrier"},
      {{"HOOP_TUNE_CALIBRATE", "0"}, {"HOOP_DEBUG", "INFO"}, {"HOOP_DEBUG_SUBSYS", "TUNE"}});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_EQ(result.output.find("calibrated"), std::string::npos) << result.output;
  }
}

// HOOP_ALGO rules by size: below 1 KiB the ring, from there the direct exchange, on every rank.
TEST(Algorithm, SizeRangesFromHoopAlgoApplyOnEveryRank) {
  auto results = runWithUniqueId(3, {"--suite", "sweep", "--only", "allreduce"},
                                 {{"HOOP_ALGO", "allreduce:0-1K=ring,1K-=direct"},
                                  {"HOOP_DEBUG", "INFO"},
                                  {"HOOP_DEBUG_SUBSYS", "COLL"}});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_NE(result.output.find("allreduce uses ring"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("allreduce uses direct"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("allreduce uses one-shot"), std::string::npos) << result.output;
  }
}

// A forced schedule that cannot serve a call (one-shot over TCP) leaves the call to hoop's own
// choice, and every rank says so at WARN, once however many sizes it covered, naming the schedule
// and the calls it does serve. A rule it can serve (one-shot up to 8 KiB over shm) says nothing.
TEST(Algorithm, ForcedScheduleThatCannotServeIsSaidOnceOnEveryRank) {
  const std::string warning = "name oneshot for allreduce of ";
  auto unfit = runWithUniqueId(2, {"--suite", "sweep", "--only", "allreduce"},
                               {{"HOOP_ALGO", "allreduce:=oneshot"}, {"HOOP_TRANSPORT", "tcp"}});
  expectAllPassed(unfit);
  for (const auto& result : unfit) {
    const size_t first = result.output.find(warning);
    ASSERT_NE(first, std::string::npos) << result.output;
    EXPECT_EQ(result.output.find(warning, first + 1), std::string::npos)
        << "said more than once: " << result.output;
    EXPECT_NE(result.output.find("it serves only calls of up to 8 KiB on up to 8 ranks"),
              std::string::npos)
        << result.output;
  }
  auto fit = runWithUniqueId(2, {"--suite", "sweep", "--only", "allreduce"},
                             {{"HOOP_ALGO", "allreduce:0-8K=oneshot"}, {"HOOP_TRANSPORT", "shm"}});
  expectAllPassed(fit);
  for (const auto& result : fit) {
    EXPECT_EQ(result.output.find(warning), std::string::npos) << result.output;
  }
}

// hoopCommSetAlgorithms on one communicator: each forced schedule runs on the very next call at
// the size hoop had already chosen for (a remembered choice would show as a schedule missing from
// the log), every sum exact, and "" returns the size to hoop's own choice.
TEST(Algorithm, SetAlgorithmsSwitchesSchedulesOnEveryRank) {
  auto results = runWithUniqueId(
      3, {"--suite", "set-algorithms", "--count", "65536"},
      {{"HOOP_TUNE_TRIAL", "0"}, {"HOOP_DEBUG", "INFO"}, {"HOOP_DEBUG_SUBSYS", "COLL,TUNE"}});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_NE(result.output.find("rules \"allreduce:=recdoubling\": recdoubling"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("rules \"allreduce:=direct\": direct"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("allreduce uses recursive doubling"), std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("allreduce uses direct"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("schedules forced from call #2 on: allreduce:=recdoubling"),
              std::string::npos)
        << result.output;
    EXPECT_NE(result.output.find("on: none (hoop's own choice)"), std::string::npos)
        << result.output;
  }
}

// Rank 1 passes other rules than ranks 0 and 2: every rank's call fails, naming rank 1 (the
// worker checks the code and message), and none hangs.
TEST(Algorithm, MismatchedSetAlgorithmsNamesTheRankOnEveryRank) {
  auto results = runWithUniqueId(3, {"--suite", "set-algorithms-mismatch"}, {});
  expectAllPassed(results);
  for (const auto& result : results) {
    EXPECT_NE(result.output.find("mismatch: "), std::string::npos) << result.output;
  }
}

// Placement from the topology: with a two-socket server's topology every rank finds its NUMA
// node and NIC, and binds the slots it receives into to that node (here only node 0 exists, so
// the fixture's cores 0 and 1, on its node 0, are where this machine's ranks run).
TEST(Topology, ReceivedSlotsGoToTheRanksNumaNode) {
  auto results =
      runWithUniqueId(2, {"--suite", "barrier"},
                      {{"HOOP_TOPO_FILE", HOOP_TOPO_FIXTURES "/dual_socket_2nic_socket0.xml"},
                       {"HOOP_TRANSPORT", "shm"},
                       {"HOOP_DEBUG", "INFO"},
                       {"HOOP_DEBUG_SUBSYS", "INIT"}});
  expectAllPassed(results);
  for (size_t r = 0; r < results.size(); ++r) {
    const std::string& log = results[r].output;
    EXPECT_NE(log.find("placement: runs on PU "), std::string::npos) << log;
    EXPECT_NE(log.find("NUMA node 0, closest NIC ens1f0np0"), std::string::npos) << log;
    EXPECT_NE(log.find("slots received here placed on NUMA node 0"), std::string::npos) << log;
  }
}

// Small slots, a low single-copy threshold and no single copy at all: messages span slots,
// mix both paths, and fall back.
TEST(Transport, ShmSlotsAndSingleCopy) {
  for (const char* cma : {"1", "0"}) {
    Env env = {{"HOOP_TRANSPORT", "shm"},        {"HOOP_SHM_SLOTS", "2"},
               {"HOOP_SHM_SLOT_SIZE", "4K"},     {"HOOP_SHM_CMA", cma},
               {"HOOP_SHM_CMA_THRESHOLD", "8K"}, {"HOOP_CHUNK_SIZE", "16K"}};
    expectAllPassed(runWithUniqueId(3, {"--suite", "sweep"}, env));
    expectAllPassed(runWithUniqueId(4, {"--suite", "p2p"}, env));
  }
}

// Tiny pieces and several sockets per peer: many frames, striped and reassembled in order.
TEST(Transport, ManyStreamsAndSmallPieces) {
  Env env = {{"HOOP_SOCKET_NSTREAMS", "3"},
             {"HOOP_CHUNK_SIZE", "4K"},
             {"HOOP_ALGO", "ring"},
             {"HOOP_TRANSPORT", "tcp"}};
  expectAllPassed(runWithUniqueId(4, {"--suite", "sweep"}, env));
  expectAllPassed(runWithUniqueId(3, {"--suite", "p2p"}, env));
}

TEST(Launch, Hooprun) {
  ProcessGroup group;
  group.start({HOOP_TEST_HOOPRUN, "-np", "4", HOOP_TEST_WORKER, "--init", "env", "--suite", "p2p"},
              {});
  auto results = group.wait(std::chrono::seconds(120));
  ASSERT_EQ(results[0].status, 0) << results[0].output;
  for (int r = 0; r < 4; ++r) {
    EXPECT_NE(results[0].output.find("OK rank " + std::to_string(r) + " of 4"), std::string::npos)
        << results[0].output;
  }
}

TEST(Launch, OpenMpi) {
  const char* mpirun = "/usr/bin/mpirun";
  if (!std::filesystem::exists(mpirun)) GTEST_SKIP() << "mpirun not installed (openmpi-bin)";
  std::string root = "HOOP_ROOT_ADDR=127.0.0.1:" + std::to_string(freePort());
  ProcessGroup group;
  group.start({mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "3", "--mca", "btl",
               "self,tcp", "-x", root, "-x", "HOOP_SOCKET_IFNAME", HOOP_TEST_WORKER, "--init",
               "env", "--suite", "sweep", "--only", "allreduce"},
              {});
  auto results = group.wait(std::chrono::seconds(180));
  ASSERT_EQ(results[0].status, 0) << results[0].output;
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(results[0].output.find("OK rank " + std::to_string(r) + " of 3"), std::string::npos)
        << results[0].output;
  }
}

TEST(Launch, TorchrunVariables) {
  const int port = freePort() - 1;  // hoop listens on MASTER_PORT + 1
  ProcessGroup group;
  for (int r = 0; r < 3; ++r) {
    group.start({HOOP_TEST_WORKER, "--init", "env", "--suite", "p2p"},
                {{"RANK", std::to_string(r)},
                 {"WORLD_SIZE", "3"},
                 {"LOCAL_RANK", std::to_string(r)},
                 {"MASTER_ADDR", "127.0.0.1"},
                 {"MASTER_PORT", std::to_string(port)}});
  }
  expectAllPassed(group.wait(std::chrono::seconds(120)));
}

TEST(Launch, SlurmVariables) {
  const std::string root = "127.0.0.1:" + std::to_string(freePort());
  ProcessGroup group;
  for (int r = 0; r < 2; ++r) {
    group.start({HOOP_TEST_WORKER, "--init", "env", "--suite", "barrier"},
                {{"SLURM_PROCID", std::to_string(r)},
                 {"SLURM_NTASKS", "2"},
                 {"SLURM_LOCALID", std::to_string(r)},
                 {"HOOP_ROOT_ADDR", root},
                 {"HOOP_SECRET", "00112233445566778899aabbccddeeff"}});
  }
  expectAllPassed(group.wait(std::chrono::seconds(120)));
}

// A rank that dies mid-job: the others get an error naming it instead of hanging.
TEST(Failure, DeadPeerIsReportedNotHung) {
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  ProcessGroup group;
  for (int r = 0; r < 3; ++r) {
    Env env = joining(id, r, 3);
    env["HOOP_TIMEOUT"] = "20";
    if (r == 2) {
      // Rank 2 joins, then exits at once; its suite never starts.
      group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "hello"}, env);
    } else {
      group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "sweep"}, env);
    }
  }
  auto results = group.wait(std::chrono::seconds(60));
  EXPECT_EQ(results[2].status, 0) << results[2].output;
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].status, 1) << results[r].output;
    EXPECT_NE(results[r].output.find("rank 2"), std::string::npos) << results[r].output;
  }
}

// hoop's shared-memory segments in /dev/shm (they live only between creation and the peer's
// mapping, so one seen three times in a row is a leak, not another test's set-up).
std::vector<std::string> lingeringSegments() {
  std::vector<std::string> names;
  for (int look = 0; look < 3; ++look) {
    std::vector<std::string> now;
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
      std::string name = entry.path().filename();
      if (name.rfind("hoop-", 0) == 0) now.push_back(name);
    }
    if (look > 0) {
      std::erase_if(names, [&](const std::string& n) {
        return std::find(now.begin(), now.end(), n) == now.end();
      });
    } else {
      names = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return names;
}

// A rank killed mid-collective: the others report it by rank, and no segment is left behind.
TEST(Failure, KilledRankLeavesNoSharedMemory) {
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  ProcessGroup group;
  for (int r = 0; r < 3; ++r) {
    group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "sweep", "--large"},
                {{"HOOP_TEST_UID", toHex(id)},
                 {"HOOP_TEST_RANK", std::to_string(r)},
                 {"HOOP_TEST_NRANKS", "3"},
                 {"HOOP_TRANSPORT", "shm"},
                 {"HOOP_TIMEOUT", "30"}});
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  group.kill(1, SIGKILL);
  auto results = group.wait(std::chrono::seconds(60));
  EXPECT_EQ(results[1].status, 128 + SIGKILL);
  // A survivor names the dead rank, or the other survivor if that one gave up first.
  for (int r : {0, 2}) {
    EXPECT_EQ(results[r].status, 1) << results[r].output;
    EXPECT_NE(results[r].output.find("exited"), std::string::npos) << results[r].output;
  }
  EXPECT_TRUE(results[0].output.find("rank 1 (host") != std::string::npos ||
              results[2].output.find("rank 1 (host") != std::string::npos)
      << results[0].output << results[2].output;
  EXPECT_TRUE(lingeringSegments().empty());
}

}  // namespace
}  // namespace hoop::test
