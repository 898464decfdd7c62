// The negotiation protocol in one process: several simulated ranks, each with its own
// Coordinator, build their control bytes the way the engine does; the bytes are min-reduced and
// every coordinator must reach the same responses in the same order.
#include "train/coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace hoop::train {
namespace {

using Clock = std::chrono::steady_clock;

RequestShape allreduce(size_t count, hoopDataType_t type = hoopFloat32) {
  return {RequestKind::kAllReduce, type, hoopSum, 0, count, 1.0, 1.0};
}

struct SimulatedRank {
  std::vector<std::pair<std::string, RequestShape>> pending;  // submission order
  std::set<std::string> announced;
  bool joined = false;
  bool stopping = false;
  std::set<std::string> stallVotes;  // names this rank considers stalled
};

class Simulation {
 public:
  explicit Simulation(int nranks, size_t cacheCapacity = 16) : ranks_(nranks) {
    for (int r = 0; r < nranks; ++r) coordinators_.emplace_back(nranks, cacheCapacity, 5.0);
  }
  SimulatedRank& rank(int r) { return ranks_[static_cast<size_t>(r)]; }
  void submit(int r, const std::string& name, RequestShape shape) {
    rank(r).pending.emplace_back(name, shape);
  }
  bool lastCycleExchangedNames() const { return exchanged_; }
  const CycleOutcome& outcome() const { return outcome_; }

  // One cycle; returns the names that ran (error responses prefixed with "!").
  std::vector<std::string> cycle() {
    const ControlLayout layout = coordinators_[0].layout();
    std::vector<uint8_t> reduced(layout.total, 255);
    std::vector<std::vector<Announcement>> announcements(ranks_.size());
    for (size_t r = 0; r < ranks_.size(); ++r) {
      const Coordinator& coordinator = coordinators_[r];
      EXPECT_EQ(coordinator.layout().total, layout.total) << "rank " << r;
      SimulatedRank& self = ranks_[r];
      std::vector<uint8_t> control(layout.total, 1);
      for (size_t other = 0; other < ranks_.size(); ++other) {
        control[ControlLayout::kRankStatus + other] = kNotMine;
      }
      control[ControlLayout::kRankStatus + r] =
          self.stopping ? kStopping : (self.joined ? kJoined : kActive);
      for (size_t s = 0; s < coordinator.cacheSize(); ++s) {
        control[layout.cache + s] = self.joined ? kJoinedWithout : kMissing;
      }
      for (const auto& [name, shape] : self.pending) {
        if (self.announced.count(name) != 0) continue;
        if (auto slot = coordinator.cacheSlot(name, shape)) {
          control[layout.cache + *slot] = kHas;
        } else {
          announcements[r].push_back({name, shape});
          self.announced.insert(name);
        }
      }
      control[ControlLayout::kNothingToAnnounce] = announcements[r].empty() ? 1 : 0;
      const auto& negotiations = coordinator.negotiations();
      for (size_t i = 0; i < negotiations.size(); ++i) {
        if (self.stallVotes.count(negotiations[i].name) != 0) {
          control[layout.negotiations + i] = 0;
        }
      }
      for (size_t i = 0; i < control.size(); ++i) reduced[i] = std::min(reduced[i], control[i]);
    }
    exchanged_ = reduced[ControlLayout::kNothingToAnnounce] == 0;
    if (!exchanged_) {
      for (const auto& a : announcements) EXPECT_TRUE(a.empty());
      announcements.clear();
    }

    std::vector<std::vector<std::string>> perRank;
    for (size_t r = 0; r < ranks_.size(); ++r) {
      CycleOutcome outcome = coordinators_[r].decide(reduced, announcements, Clock::now());
      std::vector<std::string> names;
      for (const Response& response : outcome.responses) {
        names.push_back((response.error.empty() ? "" : "!") + response.name);
        auto& pending = ranks_[r].pending;
        pending.erase(std::remove_if(pending.begin(), pending.end(),
                                     [&](const auto& p) { return p.first == response.name; }),
                      pending.end());
        ranks_[r].announced.erase(response.name);
      }
      if (r == 0) outcome_ = outcome;
      perRank.push_back(names);
    }
    for (size_t r = 1; r < perRank.size(); ++r) {
      EXPECT_EQ(perRank[r], perRank[0]) << "rank " << r << " decided differently from rank 0";
    }
    return perRank[0];
  }

 private:
  std::vector<SimulatedRank> ranks_;
  std::vector<Coordinator> coordinators_;
  bool exchanged_ = false;
  CycleOutcome outcome_;
};

using Names = std::vector<std::string>;

TEST(Coordinator, NameRunsOnlyOnceEveryRankSubmittedIt) {
  Simulation sim(3);
  sim.submit(0, "a", allreduce(4));
  sim.submit(2, "a", allreduce(4));
  EXPECT_EQ(sim.cycle(), Names{});
  EXPECT_TRUE(sim.lastCycleExchangedNames());
  EXPECT_EQ(sim.cycle(), Names{});
  EXPECT_FALSE(sim.lastCycleExchangedNames());  // nothing new: no exchange
  sim.submit(1, "a", allreduce(4));
  EXPECT_EQ(sim.cycle(), Names{"a"});
}

TEST(Coordinator, DifferentSubmissionOrdersRunInOneOrder) {
  Simulation sim(2);
  for (const char* name : {"x", "y", "z"}) sim.submit(0, name, allreduce(1));
  for (const char* name : {"z", "y", "x"}) sim.submit(1, name, allreduce(1));
  const Names ran = sim.cycle();  // the simulation checks both ranks agree
  EXPECT_EQ(ran.size(), 3u);
}

TEST(Coordinator, KnownNameIsAgreedThroughTheCacheWithoutExchangingNames) {
  Simulation sim(2);
  sim.submit(0, "w", allreduce(8));
  sim.submit(1, "w", allreduce(8));
  EXPECT_EQ(sim.cycle(), Names{"w"});
  EXPECT_FALSE(sim.outcome().responses[0].fromCache);

  sim.submit(1, "w", allreduce(8));
  EXPECT_EQ(sim.cycle(), Names{});
  EXPECT_FALSE(sim.lastCycleExchangedNames());
  sim.submit(0, "w", allreduce(8));
  EXPECT_EQ(sim.cycle(), Names{"w"});
  EXPECT_FALSE(sim.lastCycleExchangedNames());
  EXPECT_TRUE(sim.outcome().responses[0].fromCache);
}

TEST(Coordinator, NewShapeOfACachedNameIsNegotiatedAndReplacesTheEntry) {
  Simulation sim(2);
  sim.submit(0, "w", allreduce(8));
  sim.submit(1, "w", allreduce(8));
  sim.cycle();
  sim.submit(0, "w", allreduce(3));
  sim.submit(1, "w", allreduce(3));
  EXPECT_EQ(sim.cycle(), Names{"w"});
  EXPECT_TRUE(sim.lastCycleExchangedNames());
  sim.submit(0, "w", allreduce(3));
  sim.submit(1, "w", allreduce(3));
  EXPECT_EQ(sim.cycle(), Names{"w"});
  EXPECT_FALSE(sim.lastCycleExchangedNames());
}

TEST(Coordinator, ShapeMismatchFailsOnEveryRankNamingBothShapes) {
  Simulation sim(2);
  sim.submit(0, "bad", allreduce(10));
  sim.submit(1, "bad", allreduce(12, hoopInt32));
  EXPECT_EQ(sim.cycle(), Names{"!bad"});
  const Response& response = sim.outcome().responses[0];
  EXPECT_EQ(response.errorCode, hoopInvalidUsage);
  EXPECT_NE(response.error.find("'bad'"), std::string::npos) << response.error;
  EXPECT_NE(response.error.find("rank 0: allreduce float[10] sum"), std::string::npos);
  EXPECT_NE(response.error.find("rank 1: allreduce int32[12] sum"), std::string::npos);
}

TEST(Coordinator, CachedOnOneRankAndMismatchedOnAnotherStillFailsEverywhere) {
  Simulation sim(2);
  sim.submit(0, "w", allreduce(8));
  sim.submit(1, "w", allreduce(8));
  sim.cycle();
  sim.submit(0, "w", allreduce(8));  // through the cache
  sim.submit(1, "w", allreduce(9));  // by name
  EXPECT_EQ(sim.cycle(), Names{});   // rank 0 learns "w" is under negotiation
  EXPECT_EQ(sim.cycle(), Names{"!w"});
}

TEST(Coordinator, StallVoteFailsTheNameAndNamesTheMissingRank) {
  Simulation sim(3);
  sim.submit(0, "lonely", allreduce(1));
  sim.submit(2, "lonely", allreduce(1));
  EXPECT_EQ(sim.cycle(), Names{});
  sim.rank(2).stallVotes.insert("lonely");  // one rank's clock is enough
  EXPECT_EQ(sim.cycle(), Names{"!lonely"});
  const Response& response = sim.outcome().responses[0];
  EXPECT_EQ(response.errorCode, hoopTimeout);
  EXPECT_NE(response.error.find("'lonely' stalled: rank(s) 1 did not submit it"), std::string::npos)
      << response.error;
  EXPECT_NE(response.error.find("rank(s) 0, 2 did"), std::string::npos) << response.error;
}

TEST(Coordinator, JoinedRankCountsAsPresentButNamesNobodySubmittedNeverRun) {
  Simulation sim(2);
  sim.submit(0, "g", allreduce(2));
  sim.submit(1, "g", allreduce(2));
  sim.cycle();  // "g" is cached now
  sim.rank(1).joined = true;
  sim.submit(0, "g", allreduce(2));
  EXPECT_EQ(sim.cycle(), Names{"g"});  // through the cache, rank 1 contributing zeros
  sim.submit(0, "new", allreduce(2));
  EXPECT_EQ(sim.cycle(), Names{"new"});  // by name, same
  EXPECT_FALSE(sim.outcome().allJoined);
  sim.rank(0).joined = true;
  EXPECT_EQ(sim.cycle(), Names{});  // everyone joined: cached "g" must not run on its own
  EXPECT_TRUE(sim.outcome().allJoined);
}

TEST(Coordinator, BroadcastFromARootThatJoinedFails) {
  Simulation sim(2);
  sim.rank(0).joined = true;
  sim.submit(1, "b", {RequestKind::kBroadcast, hoopInt32, hoopSum, 0, 4, 1.0, 1.0});
  EXPECT_EQ(sim.cycle(), Names{"!b"});
  EXPECT_NE(sim.outcome().responses[0].error.find("root rank 0, which joined"), std::string::npos);
}

TEST(Coordinator, AllGatherCountsMayDifferAndAreReported) {
  Simulation sim(3);
  for (int r = 0; r < 3; ++r) {
    sim.submit(r, "ag", {RequestKind::kAllGather, hoopInt64, hoopSum, 0, size_t(r) * 2, 1, 1});
  }
  EXPECT_EQ(sim.cycle(), Names{"ag"});
  EXPECT_EQ(sim.outcome().responses[0].perRankCounts, (std::vector<size_t>{0, 2, 4}));
}

TEST(Coordinator, CacheCapacityZeroNegotiatesEveryTime) {
  Simulation sim(2, 0);
  for (int step = 0; step < 3; ++step) {
    sim.submit(0, "w", allreduce(8));
    sim.submit(1, "w", allreduce(8));
    EXPECT_EQ(sim.cycle(), Names{"w"});
    EXPECT_TRUE(sim.lastCycleExchangedNames());
  }
}

TEST(Coordinator, ShutdownNeedsEveryRank) {
  Simulation sim(2);
  sim.rank(0).stopping = true;
  sim.cycle();
  EXPECT_FALSE(sim.outcome().shuttingDown);
  sim.rank(1).stopping = true;
  sim.cycle();
  EXPECT_TRUE(sim.outcome().shuttingDown);
}

TEST(Coordinator, StoppingRankCompletesAJoinButContributesNothing) {
  Simulation sim(2);
  sim.submit(0, "g", allreduce(2));
  sim.submit(1, "g", allreduce(2));
  sim.cycle();
  sim.rank(1).stopping = true;
  sim.submit(0, "g", allreduce(2));
  EXPECT_EQ(sim.cycle(), Names{});  // cached, but the stopping rank does not stand in for it
  sim.rank(0).joined = true;
  sim.cycle();
  EXPECT_TRUE(sim.outcome().allJoined);
  EXPECT_EQ(sim.outcome().joined, (std::vector<bool>{true, false}));
}

}  // namespace
}  // namespace hoop::train
