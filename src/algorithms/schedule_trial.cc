#include "algorithms/schedule_trial.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <optional>
#include <string>

#include "algorithms/primitives.h"
#include "algorithms/registry.h"
#include "algorithms/team.h"
#include "algorithms/tuner.h"
#include "base/logging.h"
#include "base/median.h"

namespace hoop {
namespace {

// The largest of each value over all ranks, on every rank: each rank passes what it has seen so
// far to its ring successor, n - 1 times (a maximum does not mind seeing a value twice).
std::vector<double> slowestOfEachRank(Team& comm, const FrameTag& tag, std::vector<double> values) {
  Primitives prims(comm, tag, DataType::kInt8, RedOp::kSum, 0);
  const Ring& ring = comm.ring();
  const size_t bytes = values.size() * sizeof(double);
  std::vector<double> received(values.size());
  for (size_t step = 1; step < ring.size(); ++step) {
    prims.sendRecv(ring.next(), values.data(), bytes, ring.prev(), received.data(), bytes);
    for (size_t i = 0; i < values.size(); ++i) values[i] = std::max(values[i], received[i]);
  }
  prims.finish();
  return values;
}

// The median of kConfirmRuns runs' mean calls: each run's summed microseconds over its timed
// calls. The figure of a confirmation's runs and of a watch's alike.
double medianOfRunMeans(const std::array<double, kConfirmRuns>& runSumsUs, double timedPerRun) {
  std::array<double, kConfirmRuns> means{};
  for (size_t r = 0; r < kConfirmRuns; ++r) means[r] = runSumsUs[r] / timedPerRun;
  return medianOf(means);
}

std::string microseconds(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f us", us);
  return text;
}

// "allreduce of 2048 to 4095 bytes": the kind and size class a trial speaks for.
std::string className(OpKind kind, size_t bytes) {
  const size_t sizeClass = trialSizeClass(bytes);
  const size_t low = sizeClass == 0 ? 0 : size_t{1} << (sizeClass - 1);
  const size_t high = sizeClass == 0 ? 0 : (low << 1) - 1;
  return str(opKindName(kind), " of ", low, " to ", high, " bytes");
}

// "double binary tree 10.5 us (in a row), ring 12.0 us": every candidate's agreed figure.
std::string figures(const ScheduleTrial& trial) {
  std::string text;
  for (size_t c = 0; c < trial.candidateCount; ++c) {
    text += str(c == 0 ? "" : ", ", trial.candidates[c]->logName, " ",
                microseconds(trial.agreedUs[c]), trial.confirmed[c] ? " (in a row)" : "");
  }
  return text;
}

}  // namespace

std::vector<size_t> trialCandidates(std::span<const std::optional<double>> predictedUs) {
  std::vector<size_t> priced;
  for (size_t i = 0; i < predictedUs.size(); ++i) {
    if (predictedUs[i]) priced.push_back(i);
  }
  // Stable: equal predictions keep the lower index first, as the model's own choice does.
  std::stable_sort(priced.begin(), priced.end(),
                   [&](size_t a, size_t b) { return *predictedUs[a] < *predictedUs[b]; });
  if (priced.empty()) return priced;
  const double fastestUs = *predictedUs[priced.front()];
  const bool quick = fastestUs < kQuickCallUs;
  const size_t most = quick ? kMaxTrialCandidates : kMaxLongCallCandidates;
  const double margin = quick ? kTrialMargin : kLongCallTrialMargin;
  std::vector<size_t> chosen;
  for (const size_t i : priced) {
    if (chosen.size() == most || *predictedUs[i] > margin * fastestUs) break;
    chosen.push_back(i);
  }
  return chosen;
}

ModelRanking rankByModel(OpKind kind, const CallShape& shape, const CostModel& model,
                         FunctionRef<bool(const AlgorithmEntry&)> fits) {
  std::vector<const AlgorithmEntry*> fitting;
  std::vector<std::optional<double>> predictedUs;
  for (const AlgorithmEntry& candidate : algorithmRegistry()) {
    if (candidate.kind != kind || !fits(candidate)) continue;
    fitting.push_back(&candidate);
    predictedUs.push_back(predictUs(kind, candidate.id, shape, model));
  }
  const std::vector<size_t> picked = trialCandidates(predictedUs);
  ModelRanking ranked;
  for (const size_t i : picked) ranked.schedules.push_back(fitting[i]);
  if (!picked.empty()) ranked.fastestUs = *predictedUs[picked.front()];
  return ranked;
}

TrialPlan trialPlan(double fastestPredictedUs) {
  if (fastestPredictedUs >= kQuickCallUs) return {2, 1};
  const double fitting = std::ceil(kBurstBudgetUs / std::max(fastestPredictedUs, 1e-3));
  const size_t burst = fitting >= static_cast<double>(kMaxQuickBurst)
                           ? kMaxQuickBurst
                           : std::max(kMinQuickBurst, static_cast<size_t>(fitting));
  return {kMaxTimedRounds, burst};
}

size_t trialSizeClass(size_t bytes) { return static_cast<size_t>(std::bit_width(bytes)); }

std::vector<double> ScheduleTrial::fastestRoundsUs() const {
  std::vector<double> fastest;
  for (size_t c = 0; c < candidateCount; ++c) {
    const auto rounds = std::span(timedUs[c]).first(plan.rounds);
    fastest.push_back(*std::min_element(rounds.begin(), rounds.end()) /
                      static_cast<double>(plan.timedPerBurst));
  }
  return fastest;
}

size_t confirmCallsFor(double agreedUs) {
  const double us = std::max(agreedUs, 1e-3);
  const double fillingSpan = std::ceil(kMinConfirmSpanUs / us);
  if (fillingSpan > static_cast<double>(kMaxConfirmCalls)) {
    return fillingSpan >= static_cast<double>(kMostConfirmCalls) ? kMostConfirmCalls
                                                                 : static_cast<size_t>(fillingSpan);
  }
  const double fitting = std::ceil(kConfirmBudgetUs / us);
  if (fitting >= static_cast<double>(kMaxConfirmCalls)) return kMaxConfirmCalls;
  return std::max(kMinConfirmCalls, static_cast<size_t>(fitting));
}

size_t runCallsFor(double agreedUs) {
  return std::max(kMinRunCalls, (confirmCallsFor(agreedUs) + kConfirmRuns - 1) / kConfirmRuns);
}

size_t fastestConfirmed(std::span<const double> agreedUs, std::span<const bool> confirmed) {
  // In candidate order, so that figures within the noise keep the earlier (the model's order).
  std::optional<size_t> best;
  for (size_t i = 0; i < agreedUs.size(); ++i) {
    if (confirmed[i] && (!best || agreedUs[i] < agreedUs[*best] * (1 - kTrialWinFraction))) {
      best = i;
    }
  }
  return best.value();
}

std::vector<size_t> candidatesToConfirm(std::span<const double> timedUs) {
  std::vector<size_t> order(timedUs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return timedUs[a] < timedUs[b]; });
  const double reach = timedUs[order.front()] * kConfirmReach;
  std::erase_if(order, [&](size_t i) { return timedUs[i] >= reach; });
  return order;
}

bool ScheduleTrial::countConfirmCall(double us) {
  const size_t candidate = runCandidate();
  if (nextRunCallTimed()) runUs[candidate][confirmRound()] += us;
  if (++runCallsDone == runCallsOf(candidate)) {
    runCallsDone = 0;
    ++runsDone;
  }
  return runsDone == confirmCount * kConfirmRuns;
}

std::vector<double> ScheduleTrial::medianRunsUs() const {
  std::vector<double> figures;
  for (const size_t c : std::span(confirmOrder).first(confirmCount)) {
    figures.push_back(medianOfRunMeans(runUs[c], static_cast<double>(runCallsOf(c) - 1)));
  }
  return figures;
}

void ScheduleTrial::takeTimedRounds(std::span<const double> agreed) {
  std::copy(agreed.begin(), agreed.end(), agreedUs.begin());
  const std::vector<size_t> order = candidatesToConfirm(agreed);
  std::copy(order.begin(), order.end(), confirmOrder.begin());
  confirmCount = order.size();
  phase = Phase::kConfirming;
}

void ScheduleTrial::takeConfirmations(std::span<const double> agreedInARowUs) {
  for (size_t i = 0; i < confirmCount; ++i) {
    agreedUs[confirmOrder[i]] = agreedInARowUs[i];
    confirmed[confirmOrder[i]] = true;
  }
  winner = candidates[fastestConfirmed(std::span(agreedUs).first(candidateCount),
                                       std::span(confirmed).first(candidateCount))];
  phase = Phase::kSettled;
}

bool drifted(double settledUs, double watchedUs) {
  return watchedUs >= settledUs * kDriftFactor || watchedUs * kDriftFactor <= settledUs;
}

size_t nextWatchInterval(size_t interval) {
  return interval >= kMostWatchInterval / 2 ? kMostWatchInterval : interval * 2;
}

bool ScheduleTrial::countWatchCall(double us) {
  if (nextWatchCallTimed()) {
    watchRunUs[(watchCallsDone - (watchInterval - kWatchedCalls)) / kWatchRunCalls] += us;
  }
  return ++watchCallsDone == watchInterval;
}

double ScheduleTrial::watchedUs() const {
  return medianOfRunMeans(watchRunUs, static_cast<double>(kWatchRunCalls));
}

double ScheduleTrial::settledUs() const {
  const auto timed = std::span(candidates).first(candidateCount);
  return agreedUs[static_cast<size_t>(std::find(timed.begin(), timed.end(), winner) -
                                      timed.begin())];
}

void ScheduleTrial::startOver() {
  const size_t interval = watchInterval;
  *this = ScheduleTrial{};
  watchInterval = interval;
}

void endTimedRounds(Team& comm, const FrameTag& tag, ScheduleTrial& trial) {
  trial.takeTimedRounds(slowestOfEachRank(comm, tag, trial.fastestRoundsUs()));
  std::string confirming;
  for (const size_t c : std::span(trial.confirmOrder).first(trial.confirmCount)) {
    confirming += str(confirming.empty() ? "" : ", ", trial.candidates[c]->logName, " (",
                      trial.runCallsOf(c), ")");
  }
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), className(tag.kind, trial.bytes),
      " timed at ", trial.bytes, " bytes (the slowest rank's fastest of ", trial.plan.rounds,
      " timed round(s) after a warm-up one, its mean of ", trial.plan.timedPerBurst,
      " call(s)): ", figures(trial), "; the model's pick: ", trial.candidates[0]->logName,
      "; confirming in ", kConfirmRuns,
      " interleaved runs in a row of each (calls a run): ", confirming);
}

void endConfirmation(Team& comm, const FrameTag& tag, ScheduleTrial& trial) {
  trial.takeConfirmations(slowestOfEachRank(comm, tag, trial.medianRunsUs()));
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), className(tag.kind, trial.bytes),
      " settled on ", trial.winner->logName, " (at ", trial.bytes,
      " bytes; the figures: ", figures(trial), "; the model's pick: ", trial.candidates[0]->logName,
      "; each the slowest rank's: in a row, the median of its runs' mean calls, else its fastest "
      "timed round)");
}

bool endWatch(Team& comm, const FrameTag& tag, ScheduleTrial& trial) {
  const double watchedUs = slowestOfEachRank(comm, tag, {trial.watchedUs()}).front();
  const double settledUs = trial.settledUs();
  trial.watchCallsDone = 0;
  trial.watchRunUs = {};
  const std::string ran = str(
      className(tag.kind, trial.bytes), " ran ", trial.winner->logName, " at ",
      microseconds(watchedUs), " a call (the slowest rank's median of ", kConfirmRuns, " runs of ",
      kWatchRunCalls, " calls in a row, the last of ", trial.watchInterval, " calls at ",
      trial.bytes, " bytes) against ", microseconds(settledUs), " when it settled");
  if (!drifted(settledUs, watchedUs)) {
    // Every few thousand calls of every class: for a look into the watch, not for the INFO log.
    log(LogLevel::kTrace, LogSubsys::kTune, comm.rank(), ran, ": within ", kDriftFactor, "x, kept");
    return false;
  }
  const size_t interval = nextWatchInterval(trial.watchInterval);
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), ran,
      ": timing its candidates again from the next call, then watching every ", interval, " calls");
  trial.startOver();
  trial.watchInterval = interval;
  return true;
}

}  // namespace hoop
