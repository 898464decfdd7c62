// hoop's choice settled by the job's own calls. The cost model (tuner.h) prices schedules from
// factors fitted on one machine; where it prices several close together it cannot be trusted to
// order them on another (docs/design-notes.md, "Choosing a schedule"). So the first calls of each
// kind of collective in each power-of-two size class time those schedules on the job's own data,
// and the class keeps the fastest. For one class:
//
// 1. Candidates: the schedules the model prices close to its fastest, in the model's order.
// 2. Timed rounds: a warm-up round, untimed, then rounds in which each candidate runs a burst of
//    calls; a burst's first call is untimed (it absorbs the previous schedule's tail: a rank that
//    left one schedule early waits in the next for the others), and each round starts with the
//    next candidate, so none always follows the same one. Each rank takes each candidate's
//    fastest round (its mean call, so that another process's time slice does not count); the
//    ranks keep the slowest rank's figure of each (once around the ring).
// 3. Confirmation in a row: every candidate whose figure is within kConfirmReach of the least
//    runs kConfirmRuns runs of calls in a row, interleaved: round r runs each one's r-th run, in
//    turn, so that a stretch of the machine's noise falls on one run of several candidates, not
//    on all the runs of one. A run's first call is untimed, as a burst's. Each candidate's figure
//    is the slowest rank's median of its runs' mean calls, and replaces its timed one.
// 4. The class settles on the fastest confirmed candidate. A later candidate displaces an earlier
//    one only by beating it by kTrialWinFraction, so schedules within the noise keep the model's
//    order.
// 5. With HOOP_TUNE_WATCH, the watch: every so many calls of the settled class, its last calls are
//    timed, and where they run kDriftFactor slower or faster than the figure the class settled
//    with, the class goes back to step 1 from its next call.
//
// Calls of the class at another size than the trial's are served by the model's pick meanwhile,
// untimed (see kCallsBeforeTrialMoves). Each constant below says why it is what it is.
//
// Every rank decides from the same agreed figures at the same call, so every rank runs the same
// schedule. The trial's calls are ordinary calls: exact, and bitwise identical on every rank.
// Which schedule a class settles on depends on timing, so floating-point results may differ from
// one run to the next (another order of additions), and after the watch times a class again, from
// one call to a later one. That is why the trial is off unless HOOP_TUNE_TRIAL=1 asks for it:
// by default the model's pick serves every call, the same every run.
//
// Over TCP the trial's alternating schedules load the sockets unevenly, burst by burst; with
// BBR or CUBIC sockets that can leave the settled schedule slower for the calls after it, so a
// job that turns the trial on over TCP may want HOOP_SOCKET_CONGESTION=reno (docs/tuner.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/function_ref.h"
#include "base/types.h"
#include "hoop/hoop.h"
#include "transport/connection.h"

namespace hoop {

struct AlgorithmEntry;
struct CallShape;
class Team;
struct CostModel;

// Candidates of quick calls: up to six schedules within 3x of the model's fastest. The model's
// byte terms are fitted to buffers that leave the cache, and at sizes that stay in it, on a host
// with CPUs to spare, they overprice the schedules that move the whole buffer every round, by
// about 2x: the fastest schedule can be the model's third or fourth.
//
// Up to six, every schedule one host runs over TCP: at 2 ranks the ring, two-shot, the double
// tree and Rabenseifner are the same two exchanges, priced alike, and with fewer places they took
// them all, so the direct exchange priced just above them, at times the fastest, was never timed.
// The measurements are in docs/design-notes.md, "Measurements behind the defaults".
inline constexpr double kTrialMargin = 3.0;
inline constexpr size_t kMaxTrialCandidates = 6;
// Calls priced at kQuickCallUs or more: three candidates within 2x. Each is timed on two calls
// only, so every further one is another chance for one slow call to settle the class on the wrong
// schedule, and a further candidate of a 256 MiB class costs a job seconds.
inline constexpr double kLongCallTrialMargin = 2.0;
inline constexpr size_t kMaxLongCallCandidates = 3;
// Calls priced under kQuickCallUs get three timed rounds, each burst timing as many calls as fit
// kBurstBudgetUs by that price, from 3 to 16 (at most 408 calls for six candidates, the warm-up
// round included: a few milliseconds): on a shared machine one call of a few microseconds can take
// ten times its usual time. Longer calls get two rounds of one timed call: each spans many steps
// already, and a 256 MiB call can take a second; one round alone picked slower schedules at large
// sizes.
inline constexpr double kQuickCallUs = 1000;
inline constexpr double kBurstBudgetUs = 200;
inline constexpr size_t kMinQuickBurst = 3;
inline constexpr size_t kMaxQuickBurst = 16;
inline constexpr size_t kMaxTimedRounds = 3;
// Untimed rounds before the timed ones: a process's first calls at a size larger than any before
// run several times slower than later ones, for every schedule over TCP and shm; without this
// round the model's pick, which opens the first round, would be timed on them.
inline constexpr size_t kWarmUpRounds = 1;
// The most calls a trial takes: every candidate's longest burst in every round.
inline constexpr size_t kMostTrialCalls =
    kMaxTrialCandidates * (1 + kMaxQuickBurst) * (kWarmUpRounds + kMaxTimedRounds);
inline constexpr double kTrialWinFraction = 0.03;
// The confirmation in a row. Bursts misjudge schedules whose state builds up over calls: a
// schedule can read twice as slow in bursts as in a row, and bursts ordered some schedules the
// other way round from long loops. So the figure that settles a class comes from calls in a row,
// and every candidate timed within kConfirmReach of the least gets one: the widest margin a
// candidate is priced within, as bursts were seen off by about 2x. Confirming a slower one costs
// a few of its calls, once.
//
// The runs interleave because the machine's speed drifts over a confirmation's hundreds of
// milliseconds: confirmed one after another, candidates were ranked by when they ran rather than
// by how fast they are.
//
// How many: as many calls as fit kConfirmBudgetUs by the candidate's figure, from 4 to 64 (64
// calls up to 3 ms a call, four of a 256 MiB allreduce, which its runs' untimed first calls make
// eight: kMinRunCalls), so that each run below holds several calls of 1-30 ms and a schedule's
// occasional slow call, which a loop pays, counts: with a tenth of the budget a run's figure was
// near its median call, and classes settled on schedules that loops found slower. But at least as
// many as fill kMinConfirmSpanUs (up to kMostConfirmCalls), so that calls under
// kMinConfirmSpanUs / kMaxConfirmCalls are judged over milliseconds too: 64 calls of half a
// microsecond span tens of microseconds, where one interrupt moves a run's mean and can settle
// the class on a slower schedule.
//
// The figure: the median of kConfirmRuns runs' mean calls. A mean, as a loop pays it, where a
// median call leaves out slow calls, more of some schedules' than of others'; the median of runs,
// because one call stretched by another process's time slice moves a whole mean.
inline constexpr double kConfirmBudgetUs = 200000;
inline constexpr size_t kMinConfirmCalls = 4;
inline constexpr size_t kMaxConfirmCalls = 64;
inline constexpr double kMinConfirmSpanUs = 2000;
inline constexpr size_t kMostConfirmCalls = 4096;
inline constexpr size_t kConfirmRuns = 4;
inline constexpr double kConfirmReach = kTrialMargin;
// The watch over a settled class (off by default). A trial ranks its candidates on the machine as
// it was for the trial's milliseconds to seconds, and a class keeps its schedule after it; but a
// machine can change under a long job (another job's processes, data-loading workers, a VM's host
// moving its CPUs), and with it the order of the schedules: a busy process pinned to one CPU can
// make the schedule that was fastest on the idle machine many times slower than another.
//
// With HOOP_TUNE_WATCH set, a settled class counts its calls at the trial's size, and every
// `interval` of them (HOOP_TUNE_WATCH, doubled each time the class was timed again) the last
// kWatchedCalls are timed as a confirmation's runs are: kConfirmRuns runs of kWatchRunCalls calls
// in a row, each rank's median of the runs' mean calls, and the slowest rank's of those. A figure
// kDriftFactor or more away from the one the winner settled with, slower or faster, says the
// machine the trial ranked the schedules on is gone: the class is timed again from its next call.
// Every rank counts the same calls and takes the same agreed figure, so all start again at the
// same call.
//
// kDriftFactor is wider than what a schedule's figure wanders by between launches on a machine that
// stays as it was, so that noise does not time classes again. Doubling the interval bounds what a
// machine that keeps changing can cost: a class timed again k times has run at least interval *
// (2^k - 1) calls of its settled schedule.
//
// Off by default because where it was measured it found nothing better: it saw every change it
// was shown, but the trials that followed nearly always kept the same schedule, and the loop's
// calls paid for them. Trials in a process's first second read slower than the same schedule's
// later calls, and timed again kept the same schedule too. The figures are in
// docs/design-notes.md, "Measurements behind the defaults".
inline constexpr size_t kWatchRunCalls = 8;
inline constexpr size_t kWatchedCalls = kConfirmRuns * kWatchRunCalls;
inline constexpr double kDriftFactor = 1.5;
inline constexpr size_t kDefaultWatchInterval = 0;  // off (above)
inline constexpr size_t kMostWatchInterval = size_t{1} << 40;
// Whether a settled class's watched figure lies kDriftFactor or more from its settled one.
bool drifted(double settledUs, double watchedUs);
// The interval after a class was timed again: twice the last, up to kMostWatchInterval.
size_t nextWatchInterval(size_t interval);

// A trial times its candidates at the size of its class's first call. A size called once (a job's
// one-off call that happened to open the class) would hold the trial for good, and the size the
// job loops on would never be timed: hoop-perf's own reduction of its 20 iteration times (160
// bytes) opened the 128-255 byte class before its 128-byte rows. So after kCallsBeforeTrialMoves
// calls of the class in a row that the trial could not use, it starts over at the size of the call
// in hand; a job that alternates sizes within a class still gives the first one a call every few.
inline constexpr size_t kCallsBeforeTrialMoves = 64;
// The most calls of one size before its class settles: the trial may first have to leave another
// size, then it runs, then every candidate is confirmed in a row. hoop.h promises it to tools as
// HOOP_MOST_CALLS_TO_SETTLE.
inline constexpr size_t kMostCallsToSettle =
    kCallsBeforeTrialMoves + kMostTrialCalls + kMaxTrialCandidates * kMostConfirmCalls;
// Runs of equal length add no call to the longest confirmation.
static_assert(kMostConfirmCalls % kConfirmRuns == 0);
static_assert(kMostCallsToSettle == HOOP_MOST_CALLS_TO_SETTLE,
              "the trial's longest settling changed: change HOOP_MOST_CALLS_TO_SETTLE in hoop.h");

// The candidates among schedules with these predictions (nullopt: the model does not price it,
// or it cannot serve the call): indices, fastest first (ties: the lower index).
std::vector<size_t> trialCandidates(std::span<const std::optional<double>> predictedUs);
// The schedules of collective `kind` a trial of a call of `shape` would time: those `fits` admits
// and the model prices, as trialCandidates() keeps them, fastest predicted first, with the first
// one's price. The first is the model's own choice (ties go to the earlier registry entry). Empty
// when the model prices none that fit.
struct ModelRanking {
  std::vector<const AlgorithmEntry*> schedules;
  double fastestUs = 0;
};
ModelRanking rankByModel(OpKind kind, const CallShape& shape, const CostModel& model,
                         FunctionRef<bool(const AlgorithmEntry&)> fits);
struct TrialPlan {
  size_t rounds;
  size_t timedPerBurst;
};
TrialPlan trialPlan(double fastestPredictedUs);
// A call's size class: the bit width of its bytes (sizes from 2^(c-1) to 2^c - 1).
size_t trialSizeClass(size_t bytes);
// How many calls in a row confirm a candidate whose agreed figure is `agreedUs`, in all.
size_t confirmCallsFor(double agreedUs);
// How many calls each of its kConfirmRuns runs holds: confirmCallsFor()'s share, rounded up, and
// at least kMinRunCalls.
size_t runCallsFor(double agreedUs);
// Every run opens with an untimed call: it absorbs the previous schedule's tail, as a burst's first
// call does, so a run holds two calls at least. Long calls once ran in runs of one or two, all
// timed, on the grounds that a tail is a small part of so long a call; but over TCP the first call
// after another schedule was slower than a steady one even at tens of milliseconds, and the
// trial's runs then read level schedules that loops put far apart.
inline constexpr size_t kMinRunCalls = 2;
// A run's figure divides by its timed calls (all but the first), and raising short runs to
// kMinRunCalls must not take a confirmation past kMostConfirmCalls, which kMostCallsToSettle
// counts.
static_assert(kMinRunCalls >= 2);
static_assert(kMinRunCalls * kConfirmRuns <= kMostConfirmCalls);
// The fastest of the candidates confirmed in a row (one at least); a later one must beat an
// earlier one by kTrialWinFraction.
size_t fastestConfirmed(std::span<const double> agreedUs, std::span<const bool> confirmed);
// The candidates to confirm, given their timed figures: those within kConfirmReach of the least,
// least first.
std::vector<size_t> candidatesToConfirm(std::span<const double> timedUs);

// One kind of collective in one size class.
struct ScheduleTrial {
  enum class Phase : uint8_t { kNotStarted, kTiming, kConfirming, kSettled };
  Phase phase = Phase::kNotStarted;
  size_t bytes = 0;  // the size the candidates are timed at
  std::array<const AlgorithmEntry*, kMaxTrialCandidates> candidates{};
  size_t candidateCount = 0;
  TrialPlan plan{};
  size_t callsRun = 0;
  size_t callsPassedBy = 0;  // calls of the class in a row the trial could not use
  // By candidate and round: the timed calls' microseconds, summed.
  std::array<std::array<double, kMaxTimedRounds>, kMaxTrialCandidates> timedUs{};
  // By candidate: the ranks' agreed figure, from the timed rounds, then from calls in a row.
  std::array<double, kMaxTrialCandidates> agreedUs{};
  std::array<bool, kMaxTrialCandidates> confirmed{};
  // Confirming: the candidates confirmed, in the order round 0 runs them, and where the
  // confirmation stands: runs finished (over all candidates), calls of the current run so far.
  std::array<size_t, kMaxTrialCandidates> confirmOrder{};
  size_t confirmCount = 0;
  size_t runsDone = 0;
  size_t runCallsDone = 0;
  // By candidate and run: this rank's timed calls in a row, microseconds summed.
  std::array<std::array<double, kConfirmRuns>, kMaxTrialCandidates> runUs{};
  // Settled: the schedule the class runs (null: the model's pick, there was nothing to time).
  const AlgorithmEntry* winner = nullptr;
  // The watch (kDriftFactor): calls of the trial's size between checks (0: none), the calls
  // counted since the last check, and this rank's timed calls of each run, microseconds summed.
  size_t watchInterval = 0;
  size_t watchCallsDone = 0;
  std::array<double, kConfirmRuns> watchRunUs{};

  size_t burstCalls() const { return 1 + plan.timedPerBurst; }
  // The warm-up rounds, then the timed ones.
  size_t callsInTrial() const {
    return candidateCount * burstCalls() * (kWarmUpRounds + plan.rounds);
  }
  // Below kWarmUpRounds: a warm-up round.
  size_t round() const { return callsRun / (candidateCount * burstCalls()); }
  size_t nextCandidate() const {
    if (phase == Phase::kConfirming) return runCandidate();
    return (callsRun / burstCalls() + round()) % candidateCount;
  }
  bool nextCallTimed() const { return round() >= kWarmUpRounds && callsRun % burstCalls() != 0; }
  // Where the next call's time goes in timedUs (only when nextCallTimed()).
  size_t nextTimedRound() const { return round() - kWarmUpRounds; }
  // This rank's fastest round of each candidate: its mean timed call.
  std::vector<double> fastestRoundsUs() const;

  // Confirming: round r runs every confirmed candidate's r-th run, starting r candidates later in
  // confirmOrder than round 0, so that none always follows the same one.
  size_t confirmRound() const { return runsDone / confirmCount; }
  size_t runCandidate() const {
    return confirmOrder[(runsDone % confirmCount + confirmRound()) % confirmCount];
  }
  // Calls in each of candidate c's runs (by its timed figure, which confirming leaves in place).
  size_t runCallsOf(size_t c) const { return runCallsFor(agreedUs[c]); }
  bool nextRunCallTimed() const { return runCallsDone > 0; }
  // Counts the next call of the confirmation (its microseconds go to its run when it is timed);
  // true once it was the last.
  bool countConfirmCall(double us);
  // This rank's figure of each candidate in confirmOrder: the median of its runs' mean calls.
  std::vector<double> medianRunsUs() const;

  // Whether the watch counts this class's calls: only a class that timed its candidates has a
  // figure to compare.
  bool watched() const {
    return phase == Phase::kSettled && winner != nullptr && watchInterval > 0;
  }
  // Watched: whether the next call at the trial's size is one of the last kWatchedCalls before a
  // check; counts it (its microseconds go to its run when timed), true once it was the last.
  bool nextWatchCallTimed() const { return watchCallsDone >= watchInterval - kWatchedCalls; }
  bool countWatchCall(double us);
  // This rank's figure of the watched calls: the median of its runs' mean calls.
  double watchedUs() const;
  // Watched: the agreed figure the winner settled with.
  double settledUs() const;
  // The class's state as at its first call, but for its watch's interval.
  void startOver();

  // The ranks' agreed figures of the timed rounds: the confirmation of candidatesToConfirm()'s
  // starts.
  void takeTimedRounds(std::span<const double> agreed);
  // The ranks' agreed figures of the calls in a row (in confirmOrder) replace the timed ones of
  // those candidates, and the class settles on the fastest confirmed.
  void takeConfirmations(std::span<const double> agreedInARowUs);
};

// After a trial's last timed call, on every rank: agrees on the slowest rank's figure of each
// candidate (once around the ring, in frames of the call's own `tag`), starts confirming those
// within reach in a row, and logs the times and which at INFO.
void endTimedRounds(Team& comm, const FrameTag& tag, ScheduleTrial& trial);
// After the last run in a row, on every rank: agrees on the slowest rank's figure of each
// candidate confirmed, settles the class, and logs the figures and the winner at INFO.
void endConfirmation(Team& comm, const FrameTag& tag, ScheduleTrial& trial);

// After a watched class's check call, on every rank: agrees on the slowest rank's figure of the
// watched calls and, where it drifted from the settled one, logs both at INFO and starts the class
// over (true); else the count starts again.
bool endWatch(Team& comm, const FrameTag& tag, ScheduleTrial& trial);

// Every kind and size class a communicator has called, created on first use.
class ScheduleTrials {
 public:
  ScheduleTrial& at(OpKind kind, size_t bytes) { return trials_[key(kind, bytes)]; }
  const ScheduleTrial* find(OpKind kind, size_t bytes) const {
    const auto found = trials_.find(key(kind, bytes));
    return found == trials_.end() ? nullptr : &found->second;
  }

 private:
  static uint32_t key(OpKind kind, size_t bytes) {
    return static_cast<uint32_t>(kind) << 8 | static_cast<uint32_t>(trialSizeClass(bytes));
  }
  std::unordered_map<uint32_t, ScheduleTrial> trials_;
};

}  // namespace hoop
