// hoop-validate's logic without a job: the plan's matchings, the link probe's data pattern, the
// option parser, and the analysis on made-up measurements (which link, host or rank it blames).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "algorithms/link_probe.h"
#include "analysis.h"
#include "bisection.h"
#include "options.h"
#include "plan.h"

namespace hoop::validate {
namespace {

TEST(ValidatePlan, RoundRobinMeetsEveryPairOnceInMatchings) {
  for (int n : {2, 3, 4, 5, 8}) {
    std::vector<int> members;
    for (int i = 0; i < n; ++i) members.push_back(i);
    std::set<std::pair<int, int>> met;
    for (const auto& round : roundRobin(members)) {
      std::set<int> busy;
      for (auto [a, b] : round) {
        EXPECT_TRUE(busy.insert(a).second && busy.insert(b).second) << "n=" << n;
        EXPECT_TRUE(met.insert({a, b}).second) << "pair met twice, n=" << n;
      }
      EXPECT_GE(busy.size(), static_cast<size_t>(n - n % 2)) << "not a perfect matching";
    }
    EXPECT_EQ(met.size(), static_cast<size_t>(n * (n - 1) / 2)) << "n=" << n;
  }
}

TEST(ValidatePlan, CrossRoundsPairLocalIndexesAndRepeatForASeed) {
  const Layout layout = layoutFromHostNames({"a", "a", "b", "b", "c", "c", "d", "d"});
  ASSERT_EQ(layout.hosts(), 4);
  const auto first = crossHostRounds(layout, 2, false, 7);
  const auto again = crossHostRounds(layout, 2, false, 7);
  ASSERT_EQ(first.size(), 2u);
  for (size_t r = 0; r < first.size(); ++r) EXPECT_EQ(first[r].peerOf, again[r].peerOf);
  for (const Round& round : first) {
    for (int rank = 0; rank < layout.ranks(); ++rank) {
      const int peer = round.peerOf[static_cast<size_t>(rank)];
      ASSERT_GE(peer, 0);
      EXPECT_NE(layout.hostOf[static_cast<size_t>(peer)], layout.hostOf[static_cast<size_t>(rank)]);
      EXPECT_EQ(layout.localIndexOf[static_cast<size_t>(peer)],
                layout.localIndexOf[static_cast<size_t>(rank)]);
    }
  }
  EXPECT_EQ(crossHostRounds(layout, 1, true, 7).size(), 3u);  // --full: every pair of 4 hosts
  EXPECT_EQ(intraHostRounds(layout).size(), 1u);
}

TEST(ValidateProbe, PatternCheckNamesTheFirstWrongByte) {
  std::vector<uint8_t> bytes(4099);
  fillPattern(bytes, 11, 3, 2);
  EXPECT_TRUE(checkPattern(bytes, 11, 3, 2, 0).ok);
  bytes[1000] ^= 0x10;
  bytes[2000] ^= 0x01;
  const PatternCheck check = checkPattern(bytes, 11, 3, 2, 5);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.offset, 1000);
  EXPECT_EQ(check.message, 5);
  EXPECT_EQ(check.expected ^ check.actual, 0x10);
  bytes[1000] ^= 0x10;
  bytes[2000] ^= 0x01;
  bytes[4098] ^= 0xff;  // the tail shorter than a word
  EXPECT_EQ(checkPattern(bytes, 11, 3, 2, 0).offset, 4098);
  // Another sender's, message's or call's pattern is wrong from its first bytes.
  EXPECT_LT(checkPattern(bytes, 11, 4, 2, 0).offset, 8);
  EXPECT_LT(checkPattern(bytes, 11, 3, 1, 0).offset, 8);
  EXPECT_LT(checkPattern(bytes, 12, 3, 2, 0).offset, 8);
}

TEST(ValidateOptions, ModesAndDurations) {
  EXPECT_EQ(parseOptions({"--quick"}).repeats, 1);
  EXPECT_EQ(parseOptions({}).repeats, 3);
  const Options burnIn = parseOptions({"--burn-in", "2m"});
  EXPECT_EQ(burnIn.mode, Mode::kBurnIn);
  EXPECT_EQ(burnIn.burnInSeconds, 120);
  EXPECT_EQ(parseOptions({"--bytes", "64K"}).messageBytes, 65536u);
  EXPECT_THROW(parseOptions({"--burn-in", "soon"}), UsageError);
  EXPECT_THROW(parseOptions({"--slow", "2"}), UsageError);
  EXPECT_THROW(parseOptions({"--rounds"}), UsageError);
  EXPECT_THROW(parseOptions({"--frobnicate"}), UsageError);
}

// Made-up measurements: every pair of `hosts` one-rank hosts at 1 GB/s each way (2 both ways,
// 10 us), except what `rate` says.
struct Job {
  Layout layout;
  std::vector<RankNic> nics;
  std::vector<Measurement> measurements;
  ExpectedFigures expected;
  std::vector<CollectiveOutcome> collectives;
};

// One measurement between hosts: `rate` GB/s each way, twice that both ways, 10 us.
Measurement crossHost(int a, int b, double rate) {
  Measurement m;
  m.phase = Phase::kCrossHost;
  m.a = a;
  m.b = b;
  m.transport = "tcp";
  m.figures = LinkProbe{.self = a,
                        .peer = b,
                        .lowerToHigherGBps = rate,
                        .higherToLowerGBps = rate,
                        .bidirectionalGBps = 2 * rate,
                        .latencyP50Us = 10,
                        .latencyP99Us = 20,
                        .received = {}};
  return m;
}

template <typename Rate>
Job jobOf(int hosts, Rate rate) {
  Job job;
  std::vector<std::string> names;
  for (int h = 0; h < hosts; ++h) names.push_back("h" + std::to_string(h));
  job.layout = layoutFromHostNames(names);
  job.nics.assign(static_cast<size_t>(hosts), RankNic{"eth0", 100});
  for (int a = 0; a < hosts; ++a) {
    for (int b = a + 1; b < hosts; ++b) {
      job.measurements.push_back(crossHost(a, b, rate(a, b)));
    }
  }
  return job;
}

Analysis analyseJob(const Job& job) {
  return analyse(AnalysisInput{&job.layout, &job.nics, &job.measurements, &job.expected,
                               &job.collectives, nullptr, 0.5});
}

std::vector<std::string> blamed(const Analysis& analysis) {
  std::vector<std::string> out;
  for (const Blame& blame : analysis.blames) out.push_back(blame.kind + ":" + blame.what);
  return out;
}

TEST(ValidateAnalysis, HealthyJobBlamesNothing) {
  const Analysis analysis = analyseJob(jobOf(5, [](int, int) { return 1.0; }));
  EXPECT_TRUE(analysis.outliers.empty());
  EXPECT_TRUE(analysis.blames.empty());
  EXPECT_EQ(analysis.exitCode, 0);
}

TEST(ValidateAnalysis, OneSlowLinkIsBlamedAlone) {
  const Analysis analysis =
      analyseJob(jobOf(4, [](int a, int b) { return a == 1 && b == 2 ? 0.1 : 1.0; }));
  EXPECT_EQ(blamed(analysis), std::vector<std::string>{"link:h1 <-> h2"});
  EXPECT_EQ(analysis.exitCode, 1);
  EXPECT_EQ(analysis.hosts[0].verdict, "healthy");
  EXPECT_EQ(analysis.hosts[1].verdict, "degraded");
}

TEST(ValidateAnalysis, AHostWithEveryLinkSlowIsBlamedInsteadOfItsLinks) {
  const Analysis analysis =
      analyseJob(jobOf(5, [](int a, int b) { return a == 1 || b == 1 ? 0.1 : 1.0; }));
  EXPECT_EQ(blamed(analysis), std::vector<std::string>{"host:h1"});
  EXPECT_EQ(analysis.blames[0].support, 4);
  EXPECT_EQ(analysis.exitCode, 1);
}

TEST(ValidateAnalysis, ASlowRailIsBlamedInsteadOfEveryHost) {
  // Four hosts with two ranks each, local rank i on NIC ethi; rail 1 slow everywhere.
  Job job;
  job.layout = layoutFromHostNames({"h0", "h0", "h1", "h1", "h2", "h2", "h3", "h3"});
  for (int rank = 0; rank < 8; ++rank) job.nics.push_back({"eth" + std::to_string(rank % 2), 100});
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) {
      if (a / 2 == b / 2 || a % 2 != b % 2) continue;
      job.measurements.push_back(crossHost(a, b, a % 2 == 1 ? 0.1 : 1.0));
    }
  }
  job.expected.bandwidthGBps["tcp"] = 1;
  const Analysis analysis = analyseJob(job);
  EXPECT_EQ(blamed(analysis), std::vector<std::string>{"rail:rail 1 (eth1)"});
  EXPECT_EQ(analysis.exitCode, 1);
}

// Two ranks per host, local rank i on NIC ethi, rail i with rail i; `slow(a, b)` says which
// cross-host pairs of ranks read at a tenth of the expected rate.
template <typename Slow>
Job twoRailJob(int hosts, Slow slow) {
  Job job;
  std::vector<std::string> names;
  for (int h = 0; h < hosts; ++h) names.insert(names.end(), 2, "h" + std::to_string(h));
  job.layout = layoutFromHostNames(names);
  for (int rank = 0; rank < 2 * hosts; ++rank) {
    job.nics.push_back({"eth" + std::to_string(rank % 2), 100});
  }
  for (int a = 0; a < 2 * hosts; ++a) {
    for (int b = a + 1; b < 2 * hosts; ++b) {
      if (a / 2 == b / 2 || a % 2 != b % 2) continue;
      job.measurements.push_back(crossHost(a, b, slow(a, b) ? 0.1 : 1.0));
    }
  }
  job.expected.bandwidthGBps["tcp"] = 1;
  return job;
}

TEST(ValidateAnalysis, OneHostsSlowNicIsBlamedNotTheHostNorItsLinks) {
  // h1's second NIC (rank 3) slow towards every host; its first NIC well.
  const Analysis analysis =
      analyseJob(twoRailJob(4, [](int a, int b) { return a == 3 || b == 3; }));
  EXPECT_EQ(blamed(analysis), std::vector<std::string>{"nic:h1 eth1 (rail 1)"});
  ASSERT_EQ(analysis.blames.size(), 1u);
  EXPECT_EQ(analysis.blames[0].support, 3);
  EXPECT_EQ(analysis.blames[0].of, 3);
  EXPECT_EQ(analysis.exitCode, 1);
  EXPECT_EQ(analysis.hosts[1].verdict, "degraded");
  EXPECT_EQ(analysis.hosts[0].verdict, "healthy");
  // Both of h1's NICs slow: the host.
  EXPECT_EQ(
      blamed(analyseJob(twoRailJob(4, [](int a, int b) { return a / 2 == 1 || b / 2 == 1; }))),
      std::vector<std::string>{"host:h1"});
}

TEST(ValidateAnalysis, ATailOfRetransmissionStallsBlamesTheLinkAndASchedulerTickDoesNot) {
  auto withTail = [](double p99Us) {
    Job job = jobOf(4, [](int, int) { return 1.0; });
    for (Measurement& m : job.measurements) {
      if (m.a == 1 && m.b == 2) m.figures.latencyP99Us = p99Us;
    }
    return analyseJob(job);
  };
  EXPECT_EQ(blamed(withTail(300'000)), std::vector<std::string>{"link:h1 <-> h2"});
  EXPECT_TRUE(blamed(withTail(8'000)).empty()) << "8 ms is a busy host's scheduler, not a loss";
}

TEST(ValidateBisection, TheTreeHalvesTheHostsBesideTheAnchor) {
  EXPECT_TRUE(bisectionTree(1).empty());
  EXPECT_TRUE(bisectionTree(2).empty());  // one host beside the anchor: nothing to halve
  const std::vector<BisectionNode> tree = bisectionTree(6);
  ASSERT_EQ(tree.size(), 9u);  // 5 leaves, 4 inner nodes
  EXPECT_EQ(tree[0].first, 1);
  EXPECT_EQ(tree[0].last, 5);
  int leaves = 0;
  for (const BisectionNode& node : tree) {
    EXPECT_TRUE(node.holds(0)) << "the anchor is in every group";
    if (node.left < 0) {
      EXPECT_EQ(node.first, node.last);
      ++leaves;
      continue;
    }
    const BisectionNode& left = tree[static_cast<size_t>(node.left)];
    const BisectionNode& right = tree[static_cast<size_t>(node.right)];
    // The halves split the node's hosts, the larger by at most one host.
    EXPECT_EQ(left.first, node.first);
    EXPECT_EQ(left.last + 1, right.first);
    EXPECT_EQ(right.last, node.last);
    EXPECT_LE(std::abs((left.last - left.first) - (right.last - right.first)), 1);
    EXPECT_GT(node.left, &node - tree.data()) << "children come after their parent";
  }
  EXPECT_EQ(leaves, 5);
}

TEST(ValidateAnalysis, OperatorFiguresJudgeACellWideShortfall) {
  Job job = jobOf(4, [](int, int) { return 1.0; });
  job.expected.bandwidthGBps["tcp"] = 10;
  const Analysis analysis = analyseJob(job);
  EXPECT_FALSE(analysis.outliers.empty());
  EXPECT_EQ(analysis.exitCode, 1);
}

TEST(ValidateAnalysis, ARankCorruptingWhatItSendsFailsTheJob) {
  Job job = jobOf(4, [](int, int) { return 1.0; });
  for (Measurement& m : job.measurements) {
    PatternCheck bad{.ok = false, .message = 0, .offset = 1000, .expected = 1, .actual = 254};
    if (m.a == 2) m.atB = bad;  // 2 sent it to the higher rank
    if (m.b == 2) m.atA = bad;
  }
  const Analysis analysis = analyseJob(job);
  ASSERT_FALSE(analysis.blames.empty());
  EXPECT_EQ(analysis.blames[0].kind, "rank");
  EXPECT_NE(analysis.blames[0].why.find("offset 1000"), std::string::npos);
  EXPECT_EQ(analysis.exitCode, 2);
  EXPECT_EQ(analysis.hosts[2].verdict, "failed");
}

TEST(ValidateAnalysis, BimodalSamplesAreFlagged) {
  EXPECT_TRUE(looksBimodal({1, 1.02, 0.99, 0.5, 0.51, 1.01}));
  EXPECT_FALSE(looksBimodal({1, 1.02, 0.99, 0.98, 1.01, 1.0}));
  EXPECT_FALSE(looksBimodal({1, 0.5}));
}

TEST(ValidateAnalysis, ErrorMessagesNameRanks) {
  EXPECT_EQ(ranksNamedIn("rank 0: timed out waiting for data from rank 3 (host h2, pid 9)", 4),
            std::vector<int>{3});
  EXPECT_TRUE(ranksNamedIn("rank 7 (host x) is not in a job of 4", 4).empty());
  // With a hang report, the ranks that gave no answer.
  EXPECT_EQ(ranksNamedIn("timed out waiting for data from rank 1 (host h1, pid 5)\n"
                         "  rank 2 (host h2, pid 6): no answer (unreachable)\n"
                         "  rank 1 waits for data from rank 2 (host h2, pid 6)",
                         4),
            std::vector<int>{2});
}

}  // namespace
}  // namespace hoop::validate
