// hoop's choice settled by the job's own calls. The cost model (tuner.h) prices schedules from
// factors fitted on one machine; where it prices two or three of them close together it cannot
// be trusted to order them: on the 2-core VM it was fitted on, its pick missed the fastest by up
// to 1.3x at 16-32 KiB (4 ranks over shm), and on a 16-CPU host by 1.1-2x at several sizes
// (bench/RESULTS.md, twenty-first pass). So the first calls of each kind of collective in each
// power-of-two size class time those schedules on the job's own data, and the class keeps the
// fastest.
//
// Candidates: the schedules the model predicts within kTrialMargin of its fastest, at most
// kMaxTrialCandidates, in the model's order (for calls priced at kQuickCallUs or more, within
// kLongCallTrialMargin, at most kMaxLongCallCandidates). Rounds: each round runs every candidate on
// a burst of calls in a row, the first untimed (it absorbs the previous schedule's tail: a rank
// that left one schedule early waits in the next for the others) and the others timed, each call on
// its own (the job's other calls in between do not count). Calls of the class at another size than
// the first one's are served by the model meanwhile and not timed, until kCallsBeforeTrialMoves of
// them in a row move the trial to their size. Each round starts with the next
// candidate, so none always follows the same one. A warm-up round, all untimed, comes first: a
// process's first call at a size larger than any before took 3-10x a later one, and the next one
// or two still up to 2x (every schedule, over TCP and shm), so the model's pick, which opens the
// first round, was timed on them (bench/RESULTS.md, twenty-fourth pass). After the last round
// every rank takes each candidate's fastest timed round (its mean call: as calibration does, so
// that another process's time slice does not count), the ranks keep the slowest rank's figure of
// each (passed once around the ring), and all pick the least: every rank decides from the same
// numbers, at the same call, so every rank runs the same schedule. A later candidate must beat
// an earlier one by kTrialWinFraction to displace it, so schedules within the noise keep the
// model's order.
//
// The leader is then confirmed in a row: the class runs it alone for the next confirmCallsFor()
// calls, and the ranks agree on the slowest rank's figure of them, which replaces its figure:
// the calls cut into kConfirmRuns runs of consecutive calls, the median of the runs' mean calls.
// A mean, as a loop of calls pays it: a median call leaves out a schedule's slow calls, and more
// of some schedules' than of others' (at 32 KiB, 4 ranks over shm on 2 cores, one rank's median
// call was 6% under its mean for recursive doubling and 12% for the double tree), so it can order
// close schedules otherwise than their loops' time. The median of several runs' means, because one
// call another process's time slice stretched moves a whole mean: with the mean of all the calls,
// 2 ranks over shm kept recursive doubling at 32-128 B in launches, 1.3x one-shot's 0.5 us calls
// (bench/RESULTS.md, twenty-seventh pass).
// Short bursts misjudge schedules whose state builds up over calls: at 2 MiB, 4 ranks over
// loopback TCP, the bursts read two-shot at 1.5-2.0 ms and the tree at 1.7-2.4, where in long
// loops two-shot took 2.0-2.7 and the tree 1.5-1.9; over shm at 32 KiB they read two-shot at
// twice its time in a row (bench/RESULTS.md, twenty-fifth pass). So every other candidate whose
// figure is within kConfirmReach of the fastest confirmed one is confirmed in a row too, least
// figure first, and the class settles on the fastest confirmed (a later candidate again beating
// an earlier one by kTrialWinFraction).
//
// Over TCP the trial's alternating schedules load the sockets unevenly, burst by burst; with
// BBR or CUBIC sockets that left the settled schedule twice as slow for the calls after it
// (4 ranks, 2 MiB, loopback), which is why hoop's data sockets use reno (core/config.h).
//
// The trial's calls are ordinary calls: exact, and bitwise identical on every rank. Which
// schedule a class settles on depends on timing, so floating-point results may differ from one
// run to the next (another order of additions); HOOP_ALGO fixes the schedule for jobs that need
// the same bits every run, and HOOP_TUNE_TRIAL=0 keeps the model's pick.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/function_ref.h"
#include "core/types.h"
#include "hoop/hoop.h"
#include "transport/connection.h"

namespace hoop {

struct AlgorithmEntry;
struct CallShape;
class Communicator;
struct CostModel;

// Four schedules within 3x: the model's byte terms are fitted to buffers that leave the cache,
// and at sizes that stay in it, on a host with CPUs to spare, they overprice the schedules that
// move the whole buffer every round. On a 16-CPU host (bench/RESULTS.md, twenty-sixth pass):
// - 8 ranks over shm, 8 KiB: recursive doubling and Rabenseifner took 8.8-8.9 us forced and
//   two-shot 13.6-14.4, yet both tables' launches kept two-shot. The model prices recursive
//   doubling at 1.8x two-shot with the 3.8 us step one launch calibrated (a candidate there: it
//   won, 8.7 us in a row against 14.0) and at 2.3x with a 0.8 us step, past a 2x margin.
// - 4 ranks over shm, 32 KiB: recursive doubling took 10.6-12.4 us forced against 12.7-14.6 for
//   the schedules kept; the model priced it fourth, at 2.1x two-shot.
// On the 2-core VM the double tree at 32 KiB over shm, the fastest forced schedule in one table
// of the twenty-fifth pass and one of the twenty-sixth, is the fourth, at 1.8x.
inline constexpr double kTrialMargin = 3.0;
inline constexpr size_t kMaxTrialCandidates = 4;
// Calls priced at kQuickCallUs or more keep three candidates within 2x: each is timed on two
// calls only there, so every further one is another chance for one slow call to settle the class
// on the wrong schedule, and a further candidate of a 256 MiB class costs a job seconds. No miss
// above was at such a size.
inline constexpr double kLongCallTrialMargin = 2.0;
inline constexpr size_t kMaxLongCallCandidates = 3;
// Calls the model prices under kQuickCallUs get three rounds, each burst timing as many calls as
// fit kBurstBudgetUs by that price, from 3 to 16 (at most 272 calls for four candidates, the
// warm-up round included: a few milliseconds): on a shared machine one call of a few
// microseconds can take ten times its usual time. (They were made longer for schedules 0.5-1 us
// apart at 6 us, 2 ranks over TCP on a 16-CPU host, whose order the trial kept getting wrong; that
// case did not move: bench/RESULTS.md, twenty-second pass.) Longer calls get two rounds of one
// timed call (18 calls with the warm-up round: each already spans many steps, and a 256 MiB call
// can take a second; one round alone picked 1.16-1.2x slower schedules at 32 MiB on that host).
inline constexpr double kQuickCallUs = 1000;
inline constexpr double kBurstBudgetUs = 200;
inline constexpr size_t kMinQuickBurst = 3;
inline constexpr size_t kMaxQuickBurst = 16;
inline constexpr size_t kMaxTimedRounds = 3;
// Untimed rounds before the timed ones (see the warm-up round above).
inline constexpr size_t kWarmUpRounds = 1;
// The most calls a trial takes: every candidate's longest burst in every round.
inline constexpr size_t kMostTrialCalls =
    kMaxTrialCandidates * (1 + kMaxQuickBurst) * (kWarmUpRounds + kMaxTimedRounds);
inline constexpr double kTrialWinFraction = 0.03;
// A confirmation in a row: as many calls as fit kConfirmBudgetUs by the candidate's agreed figure,
// from kMinConfirmCalls to kMaxConfirmCalls (64 calls up to 3 ms a call; four calls of a 256 MiB
// allreduce), but at least as many as fill kMinConfirmSpanUs (up to kMostConfirmCalls), so that
// calls under 31 us are judged over 2 ms too. 64 calls of half a microsecond spanned 32 us, 8 a
// run, where one interrupt moves a run's mean: 2 ranks over shm at 8 B, direct's confirmation
// read 0.6-1.7 us and recursive doubling's 0.6-2.2 from launch to launch, one-shot's 0.4-0.5, and
// one launch of six settled on direct at 0.9 us a call. The budget is long enough that calls of
// 1-30 ms get 7-64 of them, so that each of the kConfirmRuns runs holds several and a schedule's
// occasional slow call, which a loop pays, counts. With 20 ms a 2-16 ms call got 4-10, one or two a
// run, and the figure was near its median call: 4 ranks over TCP, the double tree's mean call at 8
// MiB was 16.3 ms where its median was 9.0, and two launches of three settled on it against
// two-shot's 6.8; at 2 MiB the tables kept two-shot, 1.2-1.6x the ring or the tree, pass after
// pass. With 200 ms the worst cells of three 4-rank TCP tables read 1.43, 1.19 and 1.22,
// against 1.62, 1.38 and 1.17 before, and 2 MiB 1.12-1.22 against 1.17-1.62 (bench/RESULTS.md,
// twenty-eighth pass). Every call in a row is one the job asked for, run by a candidate timed
// within 3x of the fastest confirmed. Candidates within kConfirmReach of the fastest confirmed
// figure are confirmed too: the widest margin a candidate is priced within (quick calls'; long
// calls' candidates come from within 2x), as bursts were seen to misjudge a schedule by up to 2.2x
// (two-shot at 32 KiB, 4 ranks over shm: 60.8 us in bursts, 28.2 in a row), and confirming a slower
// one costs a few of its calls, once.
inline constexpr double kConfirmBudgetUs = 200000;
inline constexpr size_t kMinConfirmCalls = 4;
inline constexpr size_t kMaxConfirmCalls = 64;
inline constexpr double kMinConfirmSpanUs = 2000;
inline constexpr size_t kMostConfirmCalls = 4096;
// Runs of consecutive calls a confirmation's figure is the median of (fewer when fewer calls).
inline constexpr size_t kConfirmRuns = 4;
inline constexpr double kConfirmReach = kTrialMargin;
// A trial times its candidates at the size of its class's first call; calls of the class at other
// sizes get the model's pick meanwhile. A size called once (a job's one-off call that happened to
// open the class) would then hold the trial for good, and the size the job loops on would never
// be timed: hoop-perf's own reduction of its 20 iteration times (160 bytes) opened the 128-255
// byte class before its 128-byte rows, which then ran the model's pick, unsettled. So after
// kCallsBeforeTrialMoves calls of the class in a row that the trial could not use, it starts over
// at the size of the call in hand; a job that alternates sizes within a class still gives the
// first one a call every few.
inline constexpr size_t kCallsBeforeTrialMoves = 64;
// The most calls of one size before its class settles: the trial may first have to leave another
// size, then it runs, then every candidate is confirmed in a row. hoop.h promises it to tools as
// HOOP_MOST_CALLS_TO_SETTLE.
inline constexpr size_t kMostCallsToSettle =
    kCallsBeforeTrialMoves + kMostTrialCalls + kMaxTrialCandidates * kMostConfirmCalls;
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
// The index of the winner among the candidates' agreed times, in candidate order.
size_t trialWinner(std::span<const double> agreedUs);
// A call's size class: the bit width of its bytes (sizes from 2^(c-1) to 2^c - 1).
size_t trialSizeClass(size_t bytes);
// How many calls in a row confirm a candidate whose agreed figure is `agreedUs`.
size_t confirmCallsFor(double agreedUs);
// The fastest of the candidates confirmed in a row (one at least); a later one must beat an
// earlier one by kTrialWinFraction.
size_t fastestConfirmed(std::span<const double> agreedUs, std::span<const bool> confirmed);
// The candidate to confirm next: the unconfirmed one with the least figure, if that is within
// kConfirmReach of the fastest confirmed one's.
std::optional<size_t> nextToConfirm(std::span<const double> agreedUs,
                                    std::span<const bool> confirmed);

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
  // Confirming: the candidate run in a row, and this rank's time of each call so far (room for
  // confirmCalls() of them, made when the confirmation starts).
  size_t confirming = 0;
  size_t confirmCallsRun = 0;
  std::vector<double> confirmUs;
  // Settled: the schedule the class runs (null: the model's pick, there was nothing to time).
  const AlgorithmEntry* winner = nullptr;

  size_t burstCalls() const { return 1 + plan.timedPerBurst; }
  // The warm-up rounds, then the timed ones.
  size_t callsInTrial() const {
    return candidateCount * burstCalls() * (kWarmUpRounds + plan.rounds);
  }
  // Below kWarmUpRounds: a warm-up round.
  size_t round() const { return callsRun / (candidateCount * burstCalls()); }
  size_t nextCandidate() const {
    if (phase == Phase::kConfirming) return confirming;
    return (callsRun / burstCalls() + round()) % candidateCount;
  }
  bool nextCallTimed() const { return round() >= kWarmUpRounds && callsRun % burstCalls() != 0; }
  // Confirming: how many calls in a row the candidate runs (its figure is the timed rounds' until
  // the confirmation replaces it).
  size_t confirmCalls() const { return confirmCallsFor(agreedUs[confirming]); }
  // Where the next call's time goes in timedUs (only when nextCallTimed()).
  size_t nextTimedRound() const { return round() - kWarmUpRounds; }
  // This rank's fastest round of each candidate: its mean timed call.
  std::vector<double> fastestRoundsUs() const;
  // This rank's figure of the calls in a row: the median of kConfirmRuns runs' mean calls.
  double confirmMedianOfMeansUs() const;

  // The ranks' agreed figures of the timed rounds: confirming the winner (trialWinner) starts.
  void takeTimedRounds(std::span<const double> agreed);
  // The ranks' agreed figure of the calls in a row replaces the confirmed candidate's figure;
  // then another candidate is confirmed (nextToConfirm), or the class settles on the fastest
  // confirmed.
  void takeConfirmation(double agreedInARowUs);

 private:
  void startConfirming(size_t candidate);
};

// After a trial's last timed call, on every rank: agrees on the slowest rank's figure of each
// candidate (once around the ring, in frames of the call's own `tag`), picks the leader, starts
// confirming it in a row, and logs the times and the pick at INFO.
void endTimedRounds(Communicator& comm, const FrameTag& tag, ScheduleTrial& trial);
// After the last call in a row, on every rank: agrees on the slowest rank's figure, then settles
// the class or confirms another candidate (nextToConfirm), and logs which at INFO.
void endConfirmation(Communicator& comm, const FrameTag& tag, ScheduleTrial& trial);

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
