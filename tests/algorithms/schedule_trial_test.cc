// The timed choice's pure parts (schedule_trial.h): which schedules are timed, in what order
// their calls run, and which one a class settles on from the agreed times.
#include "algorithms/schedule_trial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/registry.h"
#include "algorithms/tuner.h"
#include "transport/shm/shm_layout.h"

namespace hoop {
namespace {

using Prices = std::vector<std::optional<double>>;

TEST(ScheduleTrial, CandidatesAreTheCloseOnesFastestFirst) {
  // 10 us is the fastest; 29.9 is within three times it, 35 is not; unpriced schedules never run.
  EXPECT_EQ(trialCandidates(Prices{35.0, std::nullopt, 10.0, 29.9}), (std::vector<size_t>{2, 3}));
  // At most six, the fastest six.
  EXPECT_EQ(trialCandidates(Prices{14.0, 11.0, 15.0, 13.0, 16.0, 12.0, 10.0, 17.0}),
            (std::vector<size_t>{6, 1, 5, 3, 0, 2}));
  // Equal prices keep the registry's order, as the model's own pick does.
  EXPECT_EQ(trialCandidates(Prices{5.0, 3.0, 3.0}), (std::vector<size_t>{1, 2, 0}));
  // Nothing close to the fastest: one candidate, nothing to time.
  EXPECT_EQ(trialCandidates(Prices{1.0, 3.5, 100.0}), (std::vector<size_t>{0}));
  // Calls priced at 1 ms or more: at most three, within twice the fastest.
  EXPECT_EQ(trialCandidates(Prices{kQuickCallUs, 1900.0, 1500.0, 1200.0}),
            (std::vector<size_t>{0, 3, 2}));
  EXPECT_EQ(trialCandidates(Prices{kQuickCallUs, 2100.0, 1900.0}), (std::vector<size_t>{0, 2}));
  EXPECT_EQ(trialCandidates(Prices{900.0, 1900.0, 1500.0, 1200.0}),
            (std::vector<size_t>{0, 3, 2, 1}));
  EXPECT_TRUE(trialCandidates(Prices{std::nullopt}).empty());
  EXPECT_TRUE(trialCandidates(Prices{}).empty());
}

// The trial's candidates for an allreduce of `bytes` over shm on one host, by name, as dispatch
// ranks them, priced with `model` (a launch's calibrated figures). One-shot serves only calls
// that fit its eager buffers; the hierarchy, which needs several hosts, the model does not price
// here.
std::vector<ScheduleId> shmCandidates(size_t bytes, size_t ranks, const CostModel& model,
                                      double ranksPerCpu) {
  CallShape shape{bytes, ranks, 1, ranks, true};
  shape.ranksPerCpu = ranksPerCpu;
  // What one-shot's fit asks of a single-host shm communicator; every other schedule fits.
  const auto fits = [&](const AlgorithmEntry& entry) {
    return entry.id != ScheduleId::kOneShot || bytes <= ShmLayout::kEagerBytes;
  };
  std::vector<ScheduleId> chosen;
  for (const AlgorithmEntry* entry :
       rankByModel(OpKind::kAllReduce, shape, model, fits).schedules) {
    chosen.push_back(entry->id);
  }
  return chosen;
}

CostModel calibrated(double shmAlphaUs, double shmGbps, double reduceGbps) {
  CostModel model;
  model.shm = {shmAlphaUs, shmGbps * 1e3};
  model.eagerAlphaUs = shmAlphaUs;  // calibration sets both from the same step
  model.reduceBytesPerUs = reduceGbps * 1e3;
  return model;
}

bool has(const std::vector<ScheduleId>& ids, ScheduleId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Where the model misordered schedules whose buffers stay in the cache, the fastest forced one is
// still timed (bench/RESULTS.md, twenty-sixth pass; the figures are launches' calibrations).
TEST(ScheduleTrial, TheFastestForcedScheduleInTheCacheIsACandidate) {
  // 16 CPUs, 4 ranks, 32 KiB: recursive doubling, priced fourth at 2.1x two-shot.
  const CostModel fourOnSixteen = calibrated(0.834, 6.885, 6.210);
  EXPECT_TRUE(has(shmCandidates(32 << 10, 4, fourOnSixteen, 0.25), ScheduleId::kRecursiveDoubling));
  // 16 CPUs, 8 ranks, 8 KiB: recursive doubling, at 1.8x two-shot with the step the 8-rank launch
  // calibrated and 2.3x with the 4-rank one's; Rabenseifner at 2.2x with the latter.
  const CostModel eightOnSixteen = calibrated(3.831, 7.013, 6.960);
  for (const CostModel& model : {fourOnSixteen, eightOnSixteen}) {
    const std::vector<ScheduleId> chosen = shmCandidates(8 << 10, 8, model, 0.5);
    EXPECT_TRUE(has(chosen, ScheduleId::kRecursiveDoubling));
    EXPECT_EQ(chosen.front(),
              ScheduleId::kTwoShot);  // the model's pick, which the forced runs beat
  }
  EXPECT_TRUE(has(shmCandidates(8 << 10, 8, fourOnSixteen, 0.5), ScheduleId::kRabenseifner));
  // The 2-core VM, 4 ranks, 32 KiB: the double tree, priced fourth at 1.8x two-shot.
  EXPECT_TRUE(
      has(shmCandidates(32 << 10, 4, calibrated(5.711, 10.439, 30.727), 2), ScheduleId::kTree));
}

// 2 ranks over TCP, 128 KiB, with a 16-CPU launch's calibration (6.32 us + 3.87 GB/s a step,
// 7.07 GB/s reduction): the ring, two-shot, the double tree and Rabenseifner are the same two
// exchanges there and priced alike; the direct exchange, priced just above them and the fastest
// forced (bench/RESULTS.md, thirty-third pass), is timed too, and so is recursive doubling.
TEST(ScheduleTrial, EverySchedulePricedCloseIsACandidateAtTwoRanksOverTcp) {
  CostModel model;
  model.tcp = {6.32263, 3.87083e3};
  model.reduceBytesPerUs = 7.07264e3;
  CallShape shape{128 << 10, 2, 1, 2, false};
  shape.ranksPerCpu = 0.125;
  const auto fits = [](const AlgorithmEntry& entry) { return entry.id != ScheduleId::kOneShot; };
  std::vector<ScheduleId> chosen;
  for (const AlgorithmEntry* entry :
       rankByModel(OpKind::kAllReduce, shape, model, fits).schedules) {
    chosen.push_back(entry->id);
  }
  EXPECT_EQ(chosen.size(), 6u);
  EXPECT_TRUE(has(chosen, ScheduleId::kDirect));
  EXPECT_TRUE(has(chosen, ScheduleId::kRecursiveDoubling));
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
  // The longest trial: six candidates on the quickest calls, 4 rounds of bursts of 17.
  ScheduleTrial longest;
  longest.candidateCount = kMaxTrialCandidates;
  longest.plan = tiny;
  EXPECT_EQ(longest.callsInTrial(), kMostTrialCalls);
  EXPECT_EQ(kMostTrialCalls, 408u);
}

// As many calls in a row as fit 200 ms by the leader's figure, from 4 to 64, but never fewer than
// fill 2 ms, up to 4096.
TEST(ScheduleTrial, ConfirmationsRunAsManyCallsAsFitTheirBudget) {
  EXPECT_EQ(confirmCallsFor(20000), 10u);
  EXPECT_EQ(confirmCallsFor(19000), 11u);
  EXPECT_EQ(confirmCallsFor(4000), 50u);
  EXPECT_EQ(confirmCallsFor(3000), kMaxConfirmCalls);
  EXPECT_EQ(confirmCallsFor(40), kMaxConfirmCalls);
  EXPECT_EQ(confirmCallsFor(31.25), kMaxConfirmCalls);  // 64 calls fill 2 ms exactly
  EXPECT_EQ(confirmCallsFor(30), 67u);
  EXPECT_EQ(confirmCallsFor(10), 200u);
  EXPECT_EQ(confirmCallsFor(0.5), 4000u);
  EXPECT_EQ(confirmCallsFor(0.4), kMostConfirmCalls);
  EXPECT_EQ(confirmCallsFor(0), kMostConfirmCalls);
  EXPECT_EQ(confirmCallsFor(60000), kMinConfirmCalls);
  EXPECT_EQ(confirmCallsFor(3000000), kMinConfirmCalls);
  EXPECT_EQ(kMostCallsToSettle, 64u + 408u + 6 * 4096);
}

// Three candidates' figures, and which were confirmed in a row.
using Figures = std::array<double, 3>;
using Confirmed = std::array<bool, 3>;

TEST(ScheduleTrial, TheFastestConfirmedWinsButOnlyByMoreThanTheNoise) {
  // Unconfirmed figures do not count, however low.
  EXPECT_EQ(fastestConfirmed(Figures{1884.8, 2591.5, 2034.2}, Confirmed{false, false, true}), 2u);
  EXPECT_EQ(fastestConfirmed(Figures{1821.3, 2591.5, 2034.2}, Confirmed{true, false, true}), 0u);
  // 2% faster than an earlier candidate is within the noise: the earlier one stays.
  EXPECT_EQ(fastestConfirmed(Figures{100.0, 98.0, 50.0}, Confirmed{true, true, false}), 0u);
  EXPECT_EQ(fastestConfirmed(Figures{100.0, 96.0, 50.0}, Confirmed{true, true, false}), 1u);
}

TEST(ScheduleTrial, CandidatesTimedWithinReachOfTheLeastAreConfirmedLeastFirst) {
  using Order = std::vector<size_t>;
  EXPECT_EQ(candidatesToConfirm(Figures{2146.1, 1872.8, 2107.3}), (Order{1, 2, 0}));
  // Three times the least or more: out of reach.
  EXPECT_EQ(candidatesToConfirm(Figures{100.0, 299.9, 300.0}), (Order{0, 1}));
  EXPECT_EQ(candidatesToConfirm(Figures{300.0, 100.0, 1000.0}), (Order{1}));
  // Equal figures keep the model's order.
  EXPECT_EQ(candidatesToConfirm(Figures{5.0, 4.0, 5.0}), (Order{1, 0, 2}));
}

// Each candidate's calls in a row, shared out among its runs, rounded up; two at least, as each run
// opens with an untimed call.
TEST(ScheduleTrial, RunsShareTheConfirmationsCalls) {
  EXPECT_EQ(runCallsFor(20000), 3u);   // 10 calls
  EXPECT_EQ(runCallsFor(40), 16u);     // 64
  EXPECT_EQ(runCallsFor(30), 17u);     // 67
  EXPECT_EQ(runCallsFor(0.5), 1000u);  // 4000
  EXPECT_EQ(runCallsFor(0), kMostConfirmCalls / kConfirmRuns);
  EXPECT_EQ(runCallsFor(37000), 2u);  // 6 calls
  EXPECT_EQ(runCallsFor(60000), 2u);  // 4 calls, one a run, and each run's untimed first
}

// A trial of three candidates whose timed rounds read `timedUs`, confirming.
ScheduleTrial confirmingTrial(const std::array<AlgorithmEntry, 3>& schedules,
                              const std::vector<double>& timedUs) {
  ScheduleTrial trial;
  trial.candidateCount = 3;
  for (size_t c = 0; c < 3; ++c) trial.candidates[c] = &schedules[c];
  trial.takeTimedRounds(timedUs);
  return trial;
}

// Round r runs every confirmed candidate's r-th run, starting r candidates later; a run's first
// call is untimed, in runs of two too; untimed calls do not count, and a stretch of slow calls
// that falls on one round moves no candidate's figure.
TEST(ScheduleTrial, ConfirmationRunsInterleaveStartingInTurn) {
  const std::array<AlgorithmEntry, 3> schedules{};
  // Runs of 3, 3 and 2 calls (10, 11 and 4 calls in a row, the last two a run at least), least
  // figure first: 1, 0, 2.
  ScheduleTrial trial = confirmingTrial(schedules, {20000.0, 19000.0, 50000.0});
  ASSERT_EQ(trial.phase, ScheduleTrial::Phase::kConfirming);
  ASSERT_EQ(trial.confirmCount, 3u);
  const std::array<double, 3> quietUs{100.0, 90.0, 300.0};
  std::vector<size_t> runOpeners;
  std::array<size_t, 3> timedCalls{};
  bool last = false;
  size_t calls = 0;
  while (!last) {
    ASSERT_LT(calls++, 100u);
    const size_t c = trial.nextCandidate();
    if (trial.runCallsDone == 0) runOpeners.push_back(c);
    const bool timed = trial.nextRunCallTimed();
    timedCalls[c] += timed ? 1 : 0;
    // Untimed calls read a second; round 2 runs while the machine is five times slower.
    const double us = !timed ? 1e6 : quietUs[c] * (trial.confirmRound() == 2 ? 5 : 1);
    last = trial.countConfirmCall(us);
  }
  EXPECT_EQ(calls, 4u * (3 + 3 + 2));
  EXPECT_EQ(runOpeners, (std::vector<size_t>{1, 0, 2, 0, 2, 1, 2, 1, 0, 1, 0, 2}));
  EXPECT_EQ(timedCalls, (std::array<size_t, 3>{8, 8, 4}));
  // Each run's mean call, the median of the four: the slow round is left out.
  EXPECT_EQ(trial.medianRunsUs(), (std::vector<double>{90.0, 100.0, 300.0}));

  // One slow call in every four, as a rank of a schedule runs them on shared CPUs, in every run:
  // a loop pays it, so the figure does, where the median call would leave it out.
  trial = confirmingTrial(schedules, {40.0, 40.0, 1000.0});  // runs of 16 calls, 15 timed
  ASSERT_EQ(trial.confirmCount, 2u);
  for (size_t call = 0; !trial.countConfirmCall(trial.runCallsDone % 4 == 1 ? 55.0 : 10.0);) {
    ASSERT_LT(++call, 200u);
  }
  // Timed calls 1-15 of each run: calls 1, 5, 9 and 13 are slow: (4 * 55 + 11 * 10) / 15 = 22.
  EXPECT_EQ(trial.medianRunsUs(), (std::vector<double>{22.0, 22.0}));
}

// The ranks' figures in a row replace the confirmed candidates' timed ones, and the class settles
// on the fastest confirmed.
TEST(ScheduleTrial, ConfirmationsSettleOnTheFastestInARow) {
  const std::array<AlgorithmEntry, 3> schedules{};
  // The tree, recursive doubling, two-shot as the bursts read them at 2 MiB, ten times as long.
  ScheduleTrial trial = confirmingTrial(schedules, {18848.0, 25915.0, 16833.0});
  ASSERT_EQ(trial.confirmCount, 3u);
  EXPECT_EQ(trial.nextCandidate(), 2u);  // the timed rounds' fastest opens round 0
  // In a row two-shot is slower than the tree: the tree wins.
  trial.takeConfirmations(std::vector<double>{20342.0, 18213.0, 26000.0});
  ASSERT_EQ(trial.phase, ScheduleTrial::Phase::kSettled);
  EXPECT_EQ(trial.winner, &schedules[0]);
  EXPECT_EQ(trial.agreedUs, (std::array<double, kMaxTrialCandidates>{18213.0, 26000.0, 20342.0}));

  // A candidate whose bursts read three times the least or more is never run in a row.
  trial = confirmingTrial(schedules, {1000.0, 3400.0, 1400.0});
  ASSERT_EQ(trial.confirmCount, 2u);
  trial.takeConfirmations(std::vector<double>{1100.0, 1200.0});
  ASSERT_EQ(trial.phase, ScheduleTrial::Phase::kSettled);
  EXPECT_EQ(trial.winner, &schedules[0]);
  EXPECT_FALSE(trial.confirmed[1]);
  EXPECT_EQ(trial.agreedUs[1], 3400.0);
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

TEST(ScheduleTrial, DriftIsAFactorEitherWay) {
  EXPECT_FALSE(drifted(100.0, 100.0));
  EXPECT_FALSE(drifted(100.0, 149.0));
  EXPECT_TRUE(drifted(100.0, 150.0));
  EXPECT_TRUE(drifted(100.0, 1000.0));
  EXPECT_FALSE(drifted(150.0, 101.0));
  EXPECT_TRUE(drifted(150.0, 100.0));
  EXPECT_TRUE(drifted(150.0, 10.0));
}

TEST(ScheduleTrial, EachDriftDoublesTheWatchInterval) {
  EXPECT_EQ(nextWatchInterval(4096), 8192u);
  EXPECT_EQ(nextWatchInterval(32), 64u);
  EXPECT_EQ(nextWatchInterval(kMostWatchInterval / 2), kMostWatchInterval);
  EXPECT_EQ(nextWatchInterval(kMostWatchInterval), kMostWatchInterval);
}

// A settled class with a timed winner, watched every `interval` calls.
ScheduleTrial settledAndWatched(size_t interval) {
  static const AlgorithmEntry& ring = *findAlgorithm(OpKind::kAllReduce, ScheduleId::kRing);
  ScheduleTrial trial;
  trial.phase = ScheduleTrial::Phase::kSettled;
  trial.candidates[0] = &ring;
  trial.candidateCount = 1;
  trial.winner = &ring;
  trial.watchInterval = interval;
  return trial;
}

TEST(ScheduleTrial, TheLastCallsBeforeACheckAreTimedInRuns) {
  ScheduleTrial trial = settledAndWatched(100);
  ASSERT_TRUE(trial.watched());
  std::vector<size_t> timed;
  for (size_t call = 0; call < 100; ++call) {
    if (trial.nextWatchCallTimed()) timed.push_back(call);
    // Untimed calls bring 0; the four runs of 8 timed calls 10, 20, 30 and 40 us a call, but for
    // one call of 1000 us in the last run: the median of the runs' means is 25.
    const size_t run = call < 68 ? 0 : (call - 68) / kWatchRunCalls;
    const double us = call < 68 ? 0 : call == 99 ? 1000 : 10.0 * static_cast<double>(run + 1);
    EXPECT_EQ(trial.countWatchCall(us), call == 99) << call;
  }
  ASSERT_EQ(timed.size(), kWatchedCalls);
  EXPECT_EQ(timed.front(), 100 - kWatchedCalls);
  EXPECT_EQ(timed.back(), 99u);
  EXPECT_DOUBLE_EQ(trial.watchedUs(), 25.0);
}

TEST(ScheduleTrial, OnlyATimedWinnerWithAnIntervalIsWatched) {
  EXPECT_FALSE(settledAndWatched(0).watched());
  ScheduleTrial modelsPick = settledAndWatched(64);
  modelsPick.winner = nullptr;  // one candidate only: nothing was timed
  EXPECT_FALSE(modelsPick.watched());
  ScheduleTrial timing = settledAndWatched(64);
  timing.phase = ScheduleTrial::Phase::kTiming;
  EXPECT_FALSE(timing.watched());
}

TEST(ScheduleTrial, StartingOverKeepsOnlyTheWatchInterval) {
  ScheduleTrial trial = settledAndWatched(256);
  trial.bytes = 4096;
  trial.callsRun = 7;
  trial.agreedUs[0] = 12.5;
  trial.watchCallsDone = 200;
  trial.watchRunUs[1] = 3.0;
  trial.startOver();
  EXPECT_EQ(trial.phase, ScheduleTrial::Phase::kNotStarted);
  EXPECT_EQ(trial.winner, nullptr);
  EXPECT_EQ(trial.bytes, 0u);
  EXPECT_EQ(trial.callsRun, 0u);
  EXPECT_EQ(trial.candidateCount, 0u);
  EXPECT_EQ(trial.agreedUs[0], 0.0);
  EXPECT_EQ(trial.watchCallsDone, 0u);
  EXPECT_EQ(trial.watchRunUs[1], 0.0);
  EXPECT_EQ(trial.watchInterval, 256u);
}

}  // namespace
}  // namespace hoop
