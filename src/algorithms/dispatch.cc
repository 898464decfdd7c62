// Which schedule runs a collective: HOOP_ALGO's rule for the call when it names one that can
// serve it (algo_overrides.h), else hoop's own choice.
//
// hoop's choice: the schedule the cost model (tuner.h) predicts fastest among those that can
// serve the call (allreduce, allgather, broadcast, reduce), with the piece size it predicts
// fastest for pipelined ones; the others have one schedule. Where the model prices several
// close together and HOOP_TUNE_TRIAL=1 asks for it, the first calls of the size class time them,
// confirm the closest in runs of calls in a row, and the class keeps the fastest confirmed
// (schedule_trial.h). Every input to the choice is the same on every rank, the timings included
// (the ranks agree on them), so every rank runs the same schedule; without the trial it is also
// the same every run on the same machines.
#include <algorithm>
#include <chrono>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
#include "algorithms/schedule_trial.h"
#include "algorithms/team.h"
#include "algorithms/tuner.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/logging.h"
#include "device/executor.h"

namespace hoop {
namespace {

bool fits(const AlgorithmEntry& entry, const Team& comm, const CollectiveArgs& args) {
  return entry.fits == nullptr || entry.fits(comm, args);
}

// The size HOOP_ALGO's ranges speak of: what hoop-perf reports for the call.
size_t reportedBytes(const Team& comm, const CollectiveArgs& args) {
  const bool perRank = args.kind == OpKind::kAllGather || args.kind == OpKind::kReduceScatter ||
                       args.kind == OpKind::kAllToAll;
  return perRank ? args.bytes() * static_cast<size_t>(comm.size()) : args.bytes();
}

const AlgorithmEntry& entry(OpKind kind, ScheduleId id) {
  const AlgorithmEntry* found = findAlgorithm(kind, id);
  if (found == nullptr) {
    fail(hoopInternalError, "no ", opKindName(kind), " schedule ", scheduleName(id));
  }
  return *found;
}

// The schedule HOOP_ALGO's rules name for the call, whether or not it can serve it; null when
// no rule covers the call.
const AlgorithmEntry* namedByRules(const Team& comm, const CollectiveArgs& args) {
  return comm.algorithmRules().forced(args.kind, reportedBytes(comm, args));
}

// HOOP_ALGO's schedule for the call, when it names one that can serve it.
const AlgorithmEntry* forcedFor(const Team& comm, const CollectiveArgs& args) {
  const AlgorithmEntry* named = namedByRules(comm, args);
  return named != nullptr && fits(*named, comm, args) ? named : nullptr;
}

// For a call no rule forces a schedule on: a rule that names one which cannot serve the call
// leaves it to hoop's own choice, which the user is told once (noteForcedScheduleUnfit).
void noteRuleThatCannotServe(Team& comm, const CollectiveArgs& args) {
  if (const AlgorithmEntry* named = namedByRules(comm, args)) {
    comm.noteForcedScheduleUnfit(args.kind, named->name().data(), reportedBytes(comm, args),
                                 named->servesOnly);
  }
}

// The schedules a trial of the call would time, fastest predicted first (the first is the
// model's own choice).
ModelRanking rankByModel(const Team& comm, const CollectiveArgs& args) {
  return rankByModel(args.kind, callShape(comm, args), comm.costModel(),
                     [&](const AlgorithmEntry& candidate) { return fits(candidate, comm, args); });
}

const AlgorithmEntry& defaultChoice(const Team& comm, const CollectiveArgs& args) {
  const ModelRanking ranked = rankByModel(comm, args);
  if (!ranked.schedules.empty()) return *ranked.schedules.front();
  switch (args.kind) {
    case OpKind::kAllReduce:
    case OpKind::kAllGather:
    case OpKind::kBroadcast:
    case OpKind::kReduceScatter:
    case OpKind::kReduce: return entry(args.kind, ScheduleId::kRing);
    case OpKind::kAllToAll: return entry(args.kind, ScheduleId::kPairwise);
    default:
      fail(hoopInternalError, "runCollective: ", opKindName(args.kind), " is not a collective");
  }
}

// Pipelined schedules get the piece size the model predicts fastest, up to HOOP_CHUNK_SIZE's
// default (a shm slot); HOOP_CHUNK_SIZE set by the user is taken as it is.
size_t pieceBytesFor(const Team& comm, const CollectiveArgs& args, const AlgorithmEntry& schedule) {
  if (comm.chunkSetByUser()) return 0;
  return pipelinePieceBytes(args.kind, schedule.id, callShape(comm, args), comm.costModel(),
                            comm.chunkBytes());
}

// Whether hoop's own choice may be settled by timing on this communicator (calls HOOP_ALGO
// forces are never timed).
bool trialsOn(const Team& comm) { return comm.costModel().trial && comm.size() > 1; }

// The call's size class's trial, if one was started.
const ScheduleTrial* trialOf(const Team& comm, const CollectiveArgs& args) {
  const ScheduleTrials* trials = comm.scheduleTrialsIfAny();
  return trials == nullptr ? nullptr : trials->find(args.kind, args.bytes());
}

// The schedule the call's size class settled on by timing, when it fits the call.
const AlgorithmEntry* settledWinner(const Team& comm, const CollectiveArgs& args) {
  const ScheduleTrial* trial = trialOf(comm, args);
  if (trial == nullptr || trial->phase != ScheduleTrial::Phase::kSettled) return nullptr;
  if (trial->winner == nullptr || !fits(*trial->winner, comm, args)) return nullptr;
  return trial->winner;
}

// The choice for a call HOOP_ALGO forces `forced` on (null: none): that, else the class's
// settled winner, else the model's pick.
ScheduleChoice choose(const Team& comm, const CollectiveArgs& args, const AlgorithmEntry* forced) {
  const AlgorithmEntry* schedule = forced;
  if (schedule == nullptr && trialsOn(comm)) schedule = settledWinner(comm, args);
  if (schedule == nullptr) schedule = &defaultChoice(comm, args);
  return {schedule, pieceBytesFor(comm, args, *schedule)};
}

// The trial of the call's size class while it is still timing or confirming (the class's first
// call starts it, or settles it at once where the model prices fewer than two schedules close
// together). Only for calls trialsOn() and no HOOP_ALGO rule leave to hoop; `trial` is the
// class's.
ScheduleTrial* unsettledTrial(Team& comm, const CollectiveArgs& args, ScheduleTrial& trial) {
  if (trial.phase == ScheduleTrial::Phase::kNotStarted) {
    // A class timed again keeps the interval its drift doubled.
    if (trial.watchInterval == 0) trial.watchInterval = comm.costModel().watchCalls;
    trial.bytes = args.bytes();
    trial.phase = ScheduleTrial::Phase::kSettled;
    const ModelRanking ranked = rankByModel(comm, args);
    if (ranked.schedules.size() >= 2) {
      std::copy(ranked.schedules.begin(), ranked.schedules.end(), trial.candidates.begin());
      trial.candidateCount = ranked.schedules.size();
      trial.plan = trialPlan(ranked.fastestUs);
      trial.phase = ScheduleTrial::Phase::kTiming;
    }
  }
  return trial.phase == ScheduleTrial::Phase::kSettled ? nullptr : &trial;
}

// Whether the call can be the trial's next: at its size, and its next candidate serves the call.
bool trialCanUse(const Team& comm, const CollectiveArgs& args, const ScheduleTrial& trial) {
  return trial.bytes == args.bytes() && fits(*trial.candidates[trial.nextCandidate()], comm, args);
}

// Starts the class's trial over at this call's size (see kCallsBeforeTrialMoves); null when the
// model prices fewer than two schedules close together there, which settles the class at once.
ScheduleTrial* moveTrial(Team& comm, const CollectiveArgs& args, ScheduleTrial& trial) {
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), opKindName(args.kind), " of ", args.bytes(),
      " bytes: the last ", trial.callsPassedBy,
      " calls of its size class could not serve the trial at ", trial.bytes,
      " bytes; it starts over at ", args.bytes(), " bytes");
  trial.startOver();
  return unsettledTrial(comm, args, trial);
}

// Runs `schedule` on the call, in pieces of `pieceBytes` (0: HOOP_CHUNK_SIZE's).
void runSchedule(Team& comm, CollectiveArgs& args, const AlgorithmEntry& schedule,
                 size_t pieceBytes) {
  args.pieceBytes = pieceBytes;
  comm.noteSchedule(args.kind, schedule.logName.data(), args.bytes(), args.pieceBytes);
  const bool reduction = args.kind == OpKind::kAllReduce || args.kind == OpKind::kReduce ||
                         args.kind == OpKind::kReduceScatter;
  if (reduction && comm.size() == 1) {
    // The reduction of one input is that input (avg divides by one): no schedule needs to
    // know, so none checks.
    executorOf(args).finishAverage(args.recv, args.send, args.count, args.type, args.op, 1);
    return;
  }
  schedule.run(comm, args);
}

// runSchedule(), timed: its microseconds.
double runTimed(Team& comm, CollectiveArgs& args, const AlgorithmEntry& schedule,
                size_t pieceBytes) {
  const Clock::time_point start = Clock::now();
  runSchedule(comm, args, schedule, pieceBytes);
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One call of a trial: the next candidate, timed unless it opens its burst or its run in a row;
// after the last timed round the ranks agree on the times and the confirmation starts, after the
// last run they agree on its figures and the class settles.
void runTrialCall(Team& comm, CollectiveArgs& args, ScheduleTrial& trial) {
  const size_t candidate = trial.nextCandidate();
  const AlgorithmEntry& schedule = *trial.candidates[candidate];
  const double us = runTimed(comm, args, schedule, pieceBytesFor(comm, args, schedule));
  if (trial.phase == ScheduleTrial::Phase::kConfirming) {
    if (!trial.countConfirmCall(us)) return;
    endConfirmation(comm, args.tag(), trial);
  } else {
    if (trial.nextCallTimed()) trial.timedUs[candidate][trial.nextTimedRound()] += us;
    if (++trial.callsRun < trial.callsInTrial()) return;
    endTimedRounds(comm, args.tag(), trial);
  }
  // A size of this class may have been memoised with the model's pick meanwhile.
  if (trial.phase == ScheduleTrial::Phase::kSettled) comm.scheduleMemo(args.kind) = {};
}

// Whether the class's trial watches the call (kDriftFactor): it runs the winner the class settled
// on, at the size it was timed at.
bool watches(const ScheduleTrial& trial, const CollectiveArgs& args, const ScheduleChoice& choice) {
  return trial.watched() && trial.bytes == args.bytes() && trial.winner == choice.schedule;
}

// One call of a watched class: counted, and timed when it is one of the last before a check;
// after the check's call the ranks agree whether the class is timed again from the next call.
void runWatchedCall(Team& comm, CollectiveArgs& args, ScheduleTrial& trial,
                    const ScheduleChoice& choice) {
  double us = 0;
  if (trial.nextWatchCallTimed()) {
    us = runTimed(comm, args, *choice.schedule, choice.pieceBytes);
  } else {
    runSchedule(comm, args, *choice.schedule, choice.pieceBytes);
  }
  if (trial.countWatchCall(us) && endWatch(comm, args.tag(), trial)) {
    comm.scheduleMemo(args.kind) = {};
  }
}

// Runs the chosen schedule, through the class's watch when it has one.
void runChosen(Team& comm, CollectiveArgs& args, const ScheduleChoice& choice,
               ScheduleTrial* watch) {
  if (watch != nullptr) {
    runWatchedCall(comm, args, *watch, choice);
  } else {
    runSchedule(comm, args, *choice.schedule, choice.pieceBytes);
  }
}

}  // namespace

ScheduleChoice chooseSchedule(const Team& comm, const CollectiveArgs& args) {
  return choose(comm, args, forcedFor(comm, args));
}

bool scheduleSettled(const Team& comm, const CollectiveArgs& args) {
  if (!trialsOn(comm) || forcedFor(comm, args) != nullptr) return true;
  const ScheduleTrial* trial = trialOf(comm, args);
  if (trial == nullptr) return rankByModel(comm, args).schedules.size() < 2;
  return trial->phase == ScheduleTrial::Phase::kSettled;
}

void runCollective(Team& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type, args.tag().call);
  // The choice depends only on the kind and size (the rest is fixed for the communicator), so
  // repeated calls of one size (a training loop) skip it once it is settled.
  Team::ScheduleMemo& memo = comm.scheduleMemo(args.kind);
  if (memo.schedule != nullptr && memo.bytes == args.bytes()) {
    const ScheduleChoice remembered{static_cast<const AlgorithmEntry*>(memo.schedule),
                                    memo.pieceBytes};
    runChosen(comm, args, remembered, static_cast<ScheduleTrial*>(memo.watch));
    return;
  }
  const AlgorithmEntry* forced = forcedFor(comm, args);
  if (forced == nullptr) noteRuleThatCannotServe(comm, args);
  // The call's size class, where hoop chooses by timing (not for calls HOOP_ALGO forces).
  ScheduleTrial* classTrial = forced == nullptr && trialsOn(comm)
                                  ? &comm.scheduleTrials().at(args.kind, args.bytes())
                                  : nullptr;
  ScheduleTrial* trial = classTrial != nullptr ? unsettledTrial(comm, args, *classTrial) : nullptr;
  if (trial != nullptr && !trialCanUse(comm, args, *trial) &&
      ++trial->callsPassedBy >= kCallsBeforeTrialMoves) {
    trial = moveTrial(comm, args, *trial);
  }
  if (trial != nullptr && trialCanUse(comm, args, *trial)) {
    trial->callsPassedBy = 0;
    runTrialCall(comm, args, *trial);
    return;
  }
  const ScheduleChoice choice = choose(comm, args, forced);
  ScheduleTrial* watch =
      classTrial != nullptr && watches(*classTrial, args, choice) ? classTrial : nullptr;
  // Another size of a class still being timed gets the model's pick, not memoised.
  if (trial == nullptr) memo = {args.bytes(), choice.schedule, choice.pieceBytes, watch};
  runChosen(comm, args, choice, watch);
}

}  // namespace hoop
