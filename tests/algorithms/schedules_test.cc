// Every schedule hoop has, forced through HOOP_ALGO on real ranks (hoop_test_worker, started as
// processes) and checked exact on every rank: each entry of the registry (algorithms/registry.h)
// at 2, 3, 4 and 7 ranks over shared memory, and over TCP at a subset of those; the exchange
// schedules in small pieces; random floats giving the same bits on every rank; and ranks that
// claim different hosts, where the hierarchical schedules run.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/registry.h"
#include "base/types.h"
#include "worker_job.h"

namespace hoop::test {
namespace {

// One registry entry forced on one job: the collective and schedule as HOOP_ALGO spells them, the
// name the COLL log gives it, and where the job runs.
struct ForcedCase {
  std::string collective;  // "allreduce"
  std::string schedule;    // "recdoubling"
  std::string logName;     // "recursive doubling"
  bool hierarchical = false;
  // "shm" or "tcp" (HOOP_TRANSPORT), or "hosts": the ranks claim two hosts (HOOP_HOSTNAME), the
  // first half (rounded up) on one, and reach each other over shm within a host, tcp across.
  std::string transport;
  int nranks = 0;
};

void PrintTo(const ForcedCase& c, std::ostream* out) {
  *out << c.collective << ":=" << c.schedule << " over " << c.transport << " on " << c.nranks
       << " ranks";
}

constexpr int kRankCounts[] = {2, 3, 4, 7};

// Every entry at every rank count over shm, or over two simulated hosts for the hierarchical
// ones (on one host they never run); over TCP too, the allreduces at every rank count and the other
// collectives at the two that are not powers of two.
std::vector<ForcedCase> everyRegisteredSchedule() {
  std::vector<ForcedCase> cases;
  for (const AlgorithmEntry& entry : algorithmRegistry()) {
    ForcedCase c;
    c.collective = std::string(opKindWord(entry.kind));
    c.schedule = std::string(entry.name());
    c.logName = std::string(entry.logName);
    c.hierarchical = entry.id == ScheduleId::kHierarchical;
    for (int nranks : kRankCounts) {
      c.nranks = nranks;
      if (c.hierarchical) {
        c.transport = "hosts";
        cases.push_back(c);
        continue;
      }
      c.transport = "shm";
      cases.push_back(c);
      if (entry.kind == OpKind::kAllReduce || nranks == 3 || nranks == 7) {
        c.transport = "tcp";
        cases.push_back(c);
      }
    }
  }
  return cases;
}

// Whether the forced schedule can serve the job's calls (registry.cc's `fits`): one-shot needs
// shared memory between every pair of ranks; the hierarchical schedules need several hosts with
// the same number, two or more, of ranks each. Elsewhere hoop's own choice serves the calls.
bool serves(const ForcedCase& c) {
  if (c.schedule == "oneshot") return c.transport == "shm";
  if (c.hierarchical) return c.nranks % 2 == 0 && c.nranks >= 4;
  return true;
}

std::string caseName(const ::testing::TestParamInfo<ForcedCase>& info) {
  const ForcedCase& c = info.param;
  return c.collective + "_" + c.schedule + "_" + c.transport + "_" + std::to_string(c.nranks);
}

class Schedule : public ::testing::TestWithParam<ForcedCase> {};

// The sweep of one collective (every dtype, op, count up to 65537, in place and out of place,
// every root), exact on every rank, with one schedule forced; each rank's log says the schedule
// ran where it can serve the calls, and that it did not where it cannot.
TEST_P(Schedule, ForcedSweepIsExact) {
  const ForcedCase& c = GetParam();
  Env env = {{"HOOP_ALGO", c.collective + ":=" + c.schedule},
             {"HOOP_DEBUG", "INFO"},
             {"HOOP_DEBUG_SUBSYS", "COLL"}};
  std::vector<Env> perRank;
  if (c.transport == "hosts") {
    for (int r = 0; r < c.nranks; ++r) {
      perRank.push_back({{"HOOP_HOSTNAME", r < (c.nranks + 1) / 2 ? "a" : "b"}});
    }
  } else {
    env["HOOP_TRANSPORT"] = c.transport;
  }
  auto results =
      runWithUniqueId(c.nranks, {"--suite", "sweep", "--only", c.collective}, env, 300, perRank);
  expectAllPassed(results);
  const std::string ran = c.collective + " uses " + c.logName + " (";
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].output.find(ran) != std::string::npos, serves(c))
        << "rank " << r << ": '" << ran << "' in:\n"
        << results[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, Schedule, ::testing::ValuesIn(everyRegisteredSchedule()),
                         caseName);

// The list above holds every entry of the registry at every rank count.
TEST(ScheduleCases, EveryRegistryEntryAtEveryRankCount) {
  const std::vector<ForcedCase> cases = everyRegisteredSchedule();
  for (const AlgorithmEntry& entry : algorithmRegistry()) {
    for (int nranks : kRankCounts) {
      EXPECT_TRUE(std::any_of(cases.begin(), cases.end(),
                              [&](const ForcedCase& c) {
                                return c.collective == opKindWord(entry.kind) &&
                                       c.schedule == entry.name() && c.nranks == nranks;
                              }))
          << opKindWord(entry.kind) << ":=" << entry.name() << " at " << nranks << " ranks";
    }
  }
}

// Pieces of 256 KiB and more over shm are reduced (or copied) straight into the next rank's
// slot: a ring allreduce at 3 ranks (a reduce-scatter step, the last reduction and the allgather's
// forward all do it) and a tree reduce, on the sweep's million-element counts.
TEST(Algorithm, LargePiecesWrittenIntoSlotsAreExact) {
  expectAllPassed(
      runWithUniqueId(3, {"--suite", "sweep", "--large"},
                      {{"HOOP_ALGO", "allreduce:=ring;reduce:=tree"}, {"HOOP_TRANSPORT", "shm"}}));
}

// The exchange schedules (recursive doubling and halving, Bruck), the tree and two-shot, with
// pieces small enough that the sweep's larger counts span many of them, on rank counts that fold
// (or leave a tree unbalanced) and ones that do not.
class Exchange
    : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string, int>> {};

TEST_P(Exchange, SweepInSmallPieces) {
  auto [collective, algorithm, transport, nranks] = GetParam();
  expectAllPassed(runWithUniqueId(
      nranks, {"--suite", "sweep", "--only", collective},
      {{"HOOP_ALGO", algorithm}, {"HOOP_TRANSPORT", transport}, {"HOOP_CHUNK_SIZE", "4K"}}));
}

INSTANTIATE_TEST_SUITE_P(AllReduce, Exchange,
                         ::testing::Combine(::testing::Values("allreduce"),
                                            ::testing::Values("recdoubling", "rabenseifner", "tree",
                                                              "twoshot"),
                                            ::testing::Values("shm"), ::testing::Values(5, 8)));

// Two-shot in slices over TCP too, where its results are received into the output.
INSTANTIATE_TEST_SUITE_P(AllReduceOverTcp, Exchange,
                         ::testing::Combine(::testing::Values("allreduce"),
                                            ::testing::Values("twoshot"), ::testing::Values("tcp"),
                                            ::testing::Values(3, 4)));

INSTANTIATE_TEST_SUITE_P(AllGather, Exchange,
                         ::testing::Combine(::testing::Values("allgather"),
                                            ::testing::Values("bruck"),
                                            ::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 3, 4, 7)));

INSTANTIATE_TEST_SUITE_P(Broadcast, Exchange,
                         ::testing::Combine(::testing::Values("broadcast"),
                                            ::testing::Values("tree"),
                                            ::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 3, 4, 7)));

INSTANTIATE_TEST_SUITE_P(Reduce, Exchange,
                         ::testing::Combine(::testing::Values("reduce"), ::testing::Values("tree"),
                                            ::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 3, 4, 7)));

// Random floats with the schedule forced: every rank must end with the same bits, which holds
// only if partners combine in the same order.
class ForcedRandom : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ForcedRandom, BitwiseIdenticalOnEveryRank) {
  auto [algorithm, nranks] = GetParam();
  expectAllPassed(runWithUniqueId(nranks, {"--suite", "random"}, {{"HOOP_ALGO", algorithm}}));
}

INSTANTIATE_TEST_SUITE_P(Exchange, ForcedRandom,
                         ::testing::Combine(::testing::Values("twoshot", "recdoubling",
                                                              "rabenseifner", "tree"),
                                            ::testing::Values(3, 5)));

// Ranks that claim different hosts (HOOP_HOSTNAME): rings keep each host's ranks together, the
// hierarchical allreduce runs where hosts have equal rank counts, local ranks count per host.
class SimulatedHosts : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(SimulatedHosts, EveryCollectiveExact) {
  const auto& hosts = GetParam();
  for (const char* algorithm : {"hierarchical", ""}) {
    hoopUniqueId id;
    ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
    ProcessGroup group;
    const int nranks = static_cast<int>(hosts.size());
    for (int r = 0; r < nranks; ++r) {
      group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "sweep"},
                  {{"HOOP_TEST_UID", toHex(id)},
                   {"HOOP_TEST_RANK", std::to_string(r)},
                   {"HOOP_TEST_NRANKS", std::to_string(nranks)},
                   {"HOOP_HOSTNAME", hosts[r]},
                   {"HOOP_ALGO", algorithm},
                   {"HOOP_CHUNK_SIZE", "16K"},
                   {"HOOP_DEBUG", "INFO"},
                   {"HOOP_DEBUG_SUBSYS", "INIT,COLL,NET"}});
    }
    auto results = group.wait(std::chrono::seconds(300));
    expectAllPassed(results);
    bool uniform = true;
    for (const auto& host : hosts) {
      uniform &= std::count(hosts.begin(), hosts.end(), host) ==
                 std::count(hosts.begin(), hosts.end(), hosts[0]);
    }
    // Forced, the hierarchical schedules ran wherever every host has the same number of ranks
    // (2+), and nowhere else (hoop's own choice serves the rest).
    const std::vector<std::string> hierarchicalRuns = {"allreduce uses hierarchical",
                                                       "allgather uses hierarchical",
                                                       "broadcast uses hierarchical chains"};
    for (int r = 0; r < nranks && algorithm[0] != '\0'; ++r) {
      for (const std::string& expected : hierarchicalRuns) {
        EXPECT_EQ(results[r].output.find(expected) != std::string::npos, uniform)
            << "rank " << r << ": '" << expected << "' in:\n"
            << results[r].output;
      }
    }
    // Shared memory to peers on the same host, tcp to the others.
    for (int r = 0; r < nranks; ++r) {
      for (int peer = 0; peer < nranks; ++peer) {
        if (peer == r) continue;
        const std::string transport = hosts[peer] == hosts[r] ? "shm" : "tcp";
        const std::string other = hosts[peer] == hosts[r] ? "tcp" : "shm";
        const std::string name = "rank " + std::to_string(peer) + " (host " + hosts[peer];
        const std::string& log = results[r].output;
        for (size_t at = log.find(name); at != std::string::npos; at = log.find(name, at + 1)) {
          std::string line = log.substr(at, log.find('\n', at) - at);
          if (line.find(" over ") == std::string::npos) continue;
          EXPECT_NE(line.find(" over " + transport), std::string::npos)
              << "rank " << r << ": " << line;
          EXPECT_EQ(line.find(" over " + other), std::string::npos) << "rank " << r << ": " << line;
        }
      }
    }
    // Local rank and size are per host; the cross rank counts the hosts (in order of their
    // lowest rank) that have a rank with this local index.
    auto localRankOf = [&](int r) {
      return static_cast<int>(std::count(hosts.begin(), hosts.begin() + r, hosts[r]));
    };
    for (int r = 0; r < nranks; ++r) {
      int localSize = static_cast<int>(std::count(hosts.begin(), hosts.end(), hosts[r]));
      int localRank = localRankOf(r);
      int crossRank = 0, crossSize = 0;
      for (int other = 0; other < nranks; ++other) {
        if (localRankOf(other) != localRank) continue;
        if (other < r) ++crossRank;
        ++crossSize;
      }
      std::string expected = "local rank " + std::to_string(localRank) + " of " +
                             std::to_string(localSize) + ", cross rank " +
                             std::to_string(crossRank) + " of " + std::to_string(crossSize);
      EXPECT_NE(results[r].output.find(expected), std::string::npos)
          << "rank " << r << " expected '" << expected << "' in:\n"
          << results[r].output;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, SimulatedHosts,
                         ::testing::Values(std::vector<std::string>{"a", "a", "b", "b"},
                                           std::vector<std::string>{"b", "a", "b", "a"},
                                           std::vector<std::string>{"a", "a", "b", "b", "c", "c"},
                                           std::vector<std::string>{"a", "a", "a", "b"}));

}  // namespace
}  // namespace hoop::test
