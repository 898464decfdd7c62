#include "algorithms/schedule_trial.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <string>

#include "algorithms/primitives.h"
#include "algorithms/registry.h"
#include "core/communicator.h"
#include "core/logging.h"

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

}  // namespace

std::vector<size_t> trialCandidates(std::span<const std::optional<double>> predictedUs) {
  std::vector<size_t> priced;
  for (size_t i = 0; i < predictedUs.size(); ++i) {
    if (predictedUs[i]) priced.push_back(i);
  }
  // Stable: equal predictions keep the lower index first, as the model's own choice does.
  std::stable_sort(priced.begin(), priced.end(),
                   [&](size_t a, size_t b) { return *predictedUs[a] < *predictedUs[b]; });
  std::vector<size_t> chosen;
  for (const size_t i : priced) {
    if (chosen.size() == kMaxTrialCandidates) break;
    if (!chosen.empty() && *predictedUs[i] > kTrialMargin * *predictedUs[chosen.front()]) break;
    chosen.push_back(i);
  }
  return chosen;
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
  size_t best = 0;
  for (size_t i = 1; i < agreedUs.size(); ++i) {
    if (agreedUs[i] < agreedUs[best] * (1 - kTrialWinFraction)) best = i;
  }
  return best;
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

void settleTrial(Communicator& comm, const FrameTag& tag, ScheduleTrial& trial) {
  const std::vector<double> agreed = slowestOfEachRank(comm, tag, trial.fastestRoundsUs());
  const size_t won = trialWinner(agreed);
  trial.winner = trial.candidates[won];
  trial.phase = ScheduleTrial::Phase::kSettled;
  std::string times;
  for (size_t c = 0; c < trial.candidateCount; ++c) {
    times += str(c == 0 ? "" : ", ", trial.candidates[c]->logName, " ", microseconds(agreed[c]));
  }
  const size_t sizeClass = trialSizeClass(trial.bytes);
  const size_t low = sizeClass == 0 ? 0 : size_t{1} << (sizeClass - 1);
  const size_t high = sizeClass == 0 ? 0 : (low << 1) - 1;
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), opKindName(tag.kind), " of ", low, " to ",
      high, " bytes settled on ", trial.winner->logName, " (at ", trial.bytes,
      " bytes, the slowest rank's fastest of ", trial.plan.rounds,
      " timed round(s) after a warm-up one, its mean of ", trial.plan.timedPerBurst,
      " call(s): ", times, "; the model's pick: ", trial.candidates[0]->logName, ")");
}

}  // namespace hoop
