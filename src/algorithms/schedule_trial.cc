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
#include "algorithms/tuner.h"
#include "core/communicator.h"
#include "core/logging.h"
#include "core/median.h"

namespace hoop {
namespace {

// The largest of each value over all ranks, on every rank: each rank passes what it has seen so
// far to its ring successor, n - 1 times (a maximum does not mind seeing a value twice).
std::vector<double> slowestOfEachRank(Communicator& comm, const FrameTag& tag,
                                      std::vector<double> values) {
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

std::string microseconds(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f us", us);
  return text;
}

// The least of the figures `admits` lets in, in candidate order: a later one must beat an
// earlier one by kTrialWinFraction, so figures within the noise keep the earlier (the model's
// order). None when it admits none.
template <typename Admits>
std::optional<size_t> leastBeyondTheNoise(std::span<const double> agreedUs, Admits admits) {
  std::optional<size_t> best;
  for (size_t i = 0; i < agreedUs.size(); ++i) {
    if (admits(i) && (!best || agreedUs[i] < agreedUs[*best] * (1 - kTrialWinFraction))) best = i;
  }
  return best;
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
    predictedUs.push_back(predictUs(kind, candidate.name, shape, model));
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

size_t trialWinner(std::span<const double> agreedUs) {
  return leastBeyondTheNoise(agreedUs, [](size_t) { return true; }).value_or(0);
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

double ScheduleTrial::confirmMedianOfMeansUs() const {
  const auto calls = std::span(confirmUs).first(confirmCallsRun);
  const size_t runs = std::min(kConfirmRuns, calls.size());
  std::array<double, kConfirmRuns> means{};
  for (size_t r = 0; r < runs; ++r) {
    const size_t begin = r * calls.size() / runs;
    const auto run = calls.subspan(begin, (r + 1) * calls.size() / runs - begin);
    means[r] = std::accumulate(run.begin(), run.end(), 0.0) / static_cast<double>(run.size());
  }
  return medianOf(std::span(means).first(runs));
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

size_t fastestConfirmed(std::span<const double> agreedUs, std::span<const bool> confirmed) {
  return leastBeyondTheNoise(agreedUs, [&](size_t i) { return confirmed[i]; }).value();
}

std::optional<size_t> nextToConfirm(std::span<const double> agreedUs,
                                    std::span<const bool> confirmed) {
  const double reach = agreedUs[fastestConfirmed(agreedUs, confirmed)] * kConfirmReach;
  std::optional<size_t> next;
  for (size_t i = 0; i < agreedUs.size(); ++i) {
    if (!confirmed[i] && agreedUs[i] < reach && (!next || agreedUs[i] < agreedUs[*next])) next = i;
  }
  return next;
}

void ScheduleTrial::startConfirming(size_t candidate) {
  phase = Phase::kConfirming;
  confirming = candidate;
  confirmCallsRun = 0;
  confirmUs.assign(confirmCalls(), 0.0);
}

void ScheduleTrial::takeTimedRounds(std::span<const double> agreed) {
  std::copy(agreed.begin(), agreed.end(), agreedUs.begin());
  startConfirming(trialWinner(agreed));
}

void ScheduleTrial::takeConfirmation(double agreedInARowUs) {
  agreedUs[confirming] = agreedInARowUs;
  confirmed[confirming] = true;
  const auto figures = std::span(agreedUs).first(candidateCount);
  const auto done = std::span(confirmed).first(candidateCount);
  if (const std::optional<size_t> next = nextToConfirm(figures, done)) {
    startConfirming(*next);
    return;
  }
  winner = candidates[fastestConfirmed(figures, done)];
  phase = Phase::kSettled;
  confirmUs = {};  // up to 32 KiB, for every class the job calls
}

void endTimedRounds(Communicator& comm, const FrameTag& tag, ScheduleTrial& trial) {
  trial.takeTimedRounds(slowestOfEachRank(comm, tag, trial.fastestRoundsUs()));
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), className(tag.kind, trial.bytes),
      " timed at ", trial.bytes, " bytes (the slowest rank's fastest of ", trial.plan.rounds,
      " timed round(s) after a warm-up one, its mean of ", trial.plan.timedPerBurst,
      " call(s)): ", figures(trial), "; the model's pick: ", trial.candidates[0]->logName,
      "; confirming ", trial.candidates[trial.confirming]->logName, " over its next ",
      trial.confirmCalls(), " calls in a row");
}

void endConfirmation(Communicator& comm, const FrameTag& tag, ScheduleTrial& trial) {
  // Taking the confirmation may start the next one: what the log says of this one, first.
  const size_t done = trial.confirming;
  const size_t calls = trial.confirmCalls();
  const double timedUs = trial.agreedUs[done];
  trial.takeConfirmation(slowestOfEachRank(comm, tag, {trial.confirmMedianOfMeansUs()}).front());
  const std::string inARow = str(trial.candidates[done]->logName, "'s ", calls,
                                 " calls in a row took ", microseconds(trial.agreedUs[done]),
                                 " (the slowest rank's median of its runs' mean calls; timed ",
                                 microseconds(timedUs), ")");
  if (trial.phase == ScheduleTrial::Phase::kConfirming) {
    log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), className(tag.kind, trial.bytes), ": ",
        inARow, "; confirming ", trial.candidates[trial.confirming]->logName, " over its next ",
        trial.confirmCalls(), " calls in a row");
    return;
  }
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), className(tag.kind, trial.bytes),
      " settled on ", trial.winner->logName, " (at ", trial.bytes, " bytes, ", inARow,
      "; the figures: ", figures(trial), "; the model's pick: ", trial.candidates[0]->logName, ")");
}

}  // namespace hoop
