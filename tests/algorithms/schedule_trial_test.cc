// The timed choice's pure parts (schedule_trial.h): which schedules are timed, in what order
// their calls run, and which one a class settles on from the agreed times.
#include "algorithms/schedule_trial.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace hoop {
namespace {

using Prices = std::vector<std::optional<double>>;

TEST(ScheduleTrial, CandidatesAreTheCloseOnesFastestFirst) {
  // 10 us is the fastest; 19.9 is within twice it, 25 is not; unpriced schedules never run.
  EXPECT_EQ(trialCandidates(Prices{25.0, std::nullopt, 10.0, 19.9}), (std::vector<size_t>{2, 3}));
  // At most three, the fastest three.
  EXPECT_EQ(trialCandidates(Prices{14.0, 11.0, 13.0, 12.0, 10.0}), (std::vector<size_t>{4, 1, 3}));
  // Equal prices keep the registry's order, as the model's own pick does.
  EXPECT_EQ(trialCandidates(Prices{5.0, 3.0, 3.0}), (std::vector<size_t>{1, 2, 0}));
  // Nothing close to the fastest: one candidate, nothing to time.
  EXPECT_EQ(trialCandidates(Prices{1.0, 2.5, 100.0}), (std::vector<size_t>{0}));
  EXPECT_TRUE(trialCandidates(Prices{std::nullopt}).empty());
  EXPECT_TRUE(trialCandidates(Prices{}).empty());
}

// Quick calls: three rounds of as many timed calls as fit 200 us, from 3 to 16; from 1 ms two
// rounds of one.
TEST(ScheduleTrial, QuickCallsGetMoreTimedCallsThanLongOnes) {
  const TrialPlan tiny = trialPlan(5);
  EXPECT_EQ(tiny.rounds, kMaxTimedRounds);
  EXPECT_EQ(tiny.timedPerBurst, 16u);
  EXPECT_EQ(trialPlan(0).timedPerBurst, 16u);
  EXPECT_EQ(trialPlan(40).timedPerBurst, 5u);
  EXPECT_EQ(trialPlan(45).timedPerBurst, 5u);
  EXPECT_EQ(trialPlan(kQuickCallUs / 2).timedPerBurst, 3u);
  const TrialPlan slow = trialPlan(kQuickCallUs);
  EXPECT_EQ(slow.rounds, 2u);
  EXPECT_EQ(slow.timedPerBurst, 1u);
  // The longest trial: three candidates on the quickest calls, 4 rounds of bursts of 17.
  ScheduleTrial longest;
  longest.candidateCount = kMaxTrialCandidates;
  longest.plan = tiny;
  EXPECT_EQ(longest.callsInTrial(), kMostTrialCalls);
  EXPECT_EQ(kMostTrialCalls, 204u);
}

TEST(ScheduleTrial, TheFastestWinsButOnlyByMoreThanTheNoise) {
  EXPECT_EQ(trialWinner(std::vector<double>{30.0, 20.0, 25.0}), 1u);
  EXPECT_EQ(trialWinner(std::vector<double>{20.0, 30.0, 25.0}), 0u);
  // 2% faster than the model's pick is within the noise: the pick stays.
  EXPECT_EQ(trialWinner(std::vector<double>{100.0, 98.0}), 0u);
  EXPECT_EQ(trialWinner(std::vector<double>{100.0, 96.0}), 1u);
  EXPECT_EQ(trialWinner(std::vector<double>{7.0}), 0u);
}

TEST(ScheduleTrial, SizeClassesArePowersOfTwo) {
  EXPECT_EQ(trialSizeClass(0), 0u);
  EXPECT_EQ(trialSizeClass(1), 1u);
  EXPECT_EQ(trialSizeClass(2), 2u);
  EXPECT_EQ(trialSizeClass(3), 2u);
  EXPECT_EQ(trialSizeClass(4096), 13u);
  EXPECT_EQ(trialSizeClass(8191), 13u);
  EXPECT_EQ(trialSizeClass(8192), 14u);
}

// A warm-up round runs every candidate's burst untimed; then each timed round runs every
// candidate's burst once (an untimed call, then the timed ones), each round starting one
// candidate later; every candidate gets the same number of timed calls in every timed round.
TEST(ScheduleTrial, RoundsRunEveryCandidateInBurstsStartingInTurn) {
  ScheduleTrial trial;
  trial.candidateCount = 3;
  trial.plan = {3, 2};
  ASSERT_EQ(trial.callsInTrial(), 36u);
  std::vector<size_t> warmUp;
  std::vector<size_t> burstOpeners;
  std::vector<std::vector<size_t>> timedCalls(3, std::vector<size_t>(3));
  for (trial.callsRun = 0; trial.callsRun < trial.callsInTrial(); ++trial.callsRun) {
    const size_t c = trial.nextCandidate();
    if (trial.round() == 0) {
      EXPECT_FALSE(trial.nextCallTimed()) << "call " << trial.callsRun;
      warmUp.push_back(c);
    } else if (trial.nextCallTimed()) {
      ASSERT_LT(trial.nextTimedRound(), trial.plan.rounds);
      ++timedCalls[c][trial.nextTimedRound()];
    } else {
      burstOpeners.push_back(c);
    }
  }
  EXPECT_EQ(warmUp, (std::vector<size_t>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(burstOpeners, (std::vector<size_t>{1, 2, 0, 2, 0, 1, 0, 1, 2}));
  for (const std::vector<size_t>& perRound : timedCalls) {
    EXPECT_EQ(perRound, (std::vector<size_t>{2, 2, 2}));
  }
}

TEST(ScheduleTrial, EachCandidateIsItsFastestRoundsMeanCall) {
  ScheduleTrial trial;
  trial.candidateCount = 2;
  trial.plan = {3, 2};
  trial.timedUs[0] = {40.0, 20.0, 30.0};  // its best round: 20 us over 2 calls
  trial.timedUs[1] = {16.0, 90.0, 18.0};
  EXPECT_EQ(trial.fastestRoundsUs(), (std::vector<double>{10.0, 8.0}));
}

TEST(ScheduleTrial, ClassesAreKeptApartByKindAndSize) {
  ScheduleTrials trials;
  EXPECT_EQ(trials.find(OpKind::kAllReduce, 100), nullptr);
  trials.at(OpKind::kAllReduce, 100).bytes = 100;
  ASSERT_NE(trials.find(OpKind::kAllReduce, 127), nullptr);  // the same class
  EXPECT_EQ(trials.find(OpKind::kAllReduce, 127)->bytes, 100u);
  EXPECT_EQ(trials.find(OpKind::kAllReduce, 128), nullptr);
  EXPECT_EQ(trials.find(OpKind::kBroadcast, 100), nullptr);
}

}  // namespace
}  // namespace hoop
