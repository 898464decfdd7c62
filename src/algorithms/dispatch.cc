// Which schedule runs a collective: HOOP_ALGO's rule for the call when it names one that can
// serve it (algo_overrides.h), else hoop's own choice.
//
// hoop's choice: the schedule the cost model (tuner.h) predicts fastest among those that can
// serve the call (allreduce, allgather, broadcast, reduce), with the piece size it predicts
// fastest for pipelined ones; the others have one schedule. Where the model prices several
// close together, the first calls of the size class time them and the class keeps the fastest
// (schedule_trial.h). Every input to the choice is the same on every rank, the timings
// included (the ranks agree on them), so every rank runs the same schedule.
#include <chrono>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
#include "algorithms/schedule_trial.h"
#include "algorithms/tuner.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/logging.h"
#include "device/cpu/reduce.h"

namespace hoop {
namespace {

bool fits(const AlgorithmEntry& entry, const Communicator& comm, const CollectiveArgs& args) {
  return entry.fits == nullptr || entry.fits(comm, args);
}

// The size HOOP_ALGO's ranges speak of: what hoop-perf reports for the call.
size_t reportedBytes(const Communicator& comm, const CollectiveArgs& args) {
  const bool perRank = args.kind == OpKind::kAllGather || args.kind == OpKind::kReduceScatter ||
                       args.kind == OpKind::kAllToAll;
  return perRank ? args.bytes() * static_cast<size_t>(comm.size()) : args.bytes();
}

const AlgorithmEntry& entry(OpKind kind, std::string_view name) {
  const AlgorithmEntry* found = findAlgorithm(kind, name);
  if (found == nullptr) fail(hoopInternalError, "no ", opKindName(kind), " schedule ", name);
  return *found;
}

// HOOP_ALGO's schedule for the call, when it names one that can serve it.
const AlgorithmEntry* forcedFor(const Communicator& comm, const CollectiveArgs& args) {
  const std::string_view forced =
      comm.config().algorithms.forced(args.kind, reportedBytes(comm, args));
  if (forced.empty()) return nullptr;
  const AlgorithmEntry& wanted = entry(args.kind, forced);
  return fits(wanted, comm, args) ? &wanted : nullptr;
}

// The schedules of the call's kind that fit it, in registry order, with the model's price for
// each (nullopt: one it does not know).
struct PricedSchedules {
  std::vector<const AlgorithmEntry*> schedules;
  std::vector<std::optional<double>> predictedUs;
};

PricedSchedules priceSchedules(const Communicator& comm, const CollectiveArgs& args) {
  const CallShape shape = callShape(comm, args);
  PricedSchedules priced;
  for (const AlgorithmEntry& candidate : algorithmRegistry()) {
    if (candidate.kind != args.kind || !fits(candidate, comm, args)) continue;
    priced.schedules.push_back(&candidate);
    priced.predictedUs.push_back(
        predictUs(args.kind, candidate.name, shape, comm.config().costModel));
  }
  return priced;
}

// The schedules a trial of the call would time, fastest predicted first; the first is the
// model's own choice (ties go to the earlier entry). Empty when the model knows none of them.
std::vector<const AlgorithmEntry*> modelRanking(const Communicator& comm,
                                                const CollectiveArgs& args) {
  const PricedSchedules priced = priceSchedules(comm, args);
  std::vector<const AlgorithmEntry*> ranked;
  for (const size_t i : trialCandidates(priced.predictedUs)) ranked.push_back(priced.schedules[i]);
  return ranked;
}

const AlgorithmEntry& defaultChoice(const Communicator& comm, const CollectiveArgs& args) {
  const std::vector<const AlgorithmEntry*> ranked = modelRanking(comm, args);
  if (!ranked.empty()) return *ranked.front();
  switch (args.kind) {
    case OpKind::kAllReduce:
    case OpKind::kAllGather:
    case OpKind::kBroadcast:
    case OpKind::kReduceScatter:
    case OpKind::kReduce: return entry(args.kind, "ring");
    case OpKind::kAllToAll: return entry(args.kind, "pairwise");
    default:
      fail(hoopInternalError, "runCollective: ", opKindName(args.kind), " is not a collective");
  }
}

// Pipelined schedules get the piece size the model predicts fastest, up to HOOP_CHUNK_SIZE's
// default (a shm slot); HOOP_CHUNK_SIZE set by the user is taken as it is.
size_t pieceBytesFor(const Communicator& comm, const CollectiveArgs& args,
                     const AlgorithmEntry& schedule) {
  const Config& config = comm.config();
  if (config.chunkSetByUser) return 0;
  return pipelinePieceBytes(args.kind, schedule.name, callShape(comm, args), config.costModel,
                            config.chunkBytes);
}

// Whether hoop's own choice for the call may be settled by timing.
bool trialsApply(const Communicator& comm, const CollectiveArgs& args) {
  return comm.config().costModel.trial && comm.size() > 1 && forcedFor(comm, args) == nullptr;
}

// The schedule the call's size class settled on by timing, when it fits the call.
const AlgorithmEntry* settledWinner(const Communicator& comm, const CollectiveArgs& args) {
  if (!trialsApply(comm, args)) return nullptr;
  const ScheduleTrials* trials = comm.scheduleTrialsIfAny();
  const ScheduleTrial* trial = trials == nullptr ? nullptr : trials->find(args.kind, args.bytes());
  if (trial == nullptr || trial->phase != ScheduleTrial::Phase::kSettled) return nullptr;
  if (trial->winner == nullptr || !fits(*trial->winner, comm, args)) return nullptr;
  return trial->winner;
}

// The trial of the call's size class while it is still timing (the class's first call starts
// it, or settles it at once where the model prices fewer than two schedules close together).
ScheduleTrial* timingTrial(Communicator& comm, const CollectiveArgs& args) {
  if (!trialsApply(comm, args)) return nullptr;
  ScheduleTrial& trial = comm.scheduleTrials().at(args.kind, args.bytes());
  if (trial.phase == ScheduleTrial::Phase::kNotStarted) {
    trial.bytes = args.bytes();
    trial.phase = ScheduleTrial::Phase::kSettled;
    const PricedSchedules priced = priceSchedules(comm, args);
    const std::vector<size_t> picked = trialCandidates(priced.predictedUs);
    if (picked.size() >= 2) {
      for (size_t i = 0; i < picked.size(); ++i) {
        trial.candidates[i] = priced.schedules[picked[i]];
      }
      trial.candidateCount = picked.size();
      trial.plan = trialPlan(*priced.predictedUs[picked.front()]);
      trial.phase = ScheduleTrial::Phase::kTiming;
    }
  }
  return trial.phase == ScheduleTrial::Phase::kTiming ? &trial : nullptr;
}

// Runs `schedule` on the call, in pieces of `pieceBytes` (0: HOOP_CHUNK_SIZE's).
void runSchedule(Communicator& comm, CollectiveArgs& args, const AlgorithmEntry& schedule,
                 size_t pieceBytes) {
  args.pieceBytes = pieceBytes;
  comm.noteSchedule(args.kind, schedule.logName.data(), args.bytes(), args.pieceBytes);
  const bool reduction = args.kind == OpKind::kAllReduce || args.kind == OpKind::kReduce ||
                         args.kind == OpKind::kReduceScatter;
  if (reduction && comm.size() == 1) {
    // The reduction of one input is that input (avg divides by one): no schedule needs to
    // know, so none checks.
    finishAverage(args.recv, args.send, args.count, args.type, args.op, 1);
    return;
  }
  schedule.run(comm, args);
}

// One call of a trial: the next candidate, timed unless it opens its burst; after the last, the
// ranks agree on the times and the class settles.
void runTrialCall(Communicator& comm, CollectiveArgs& args, ScheduleTrial& trial) {
  const size_t candidate = trial.nextCandidate();
  const AlgorithmEntry& schedule = *trial.candidates[candidate];
  const Clock::time_point start = Clock::now();
  runSchedule(comm, args, schedule, pieceBytesFor(comm, args, schedule));
  if (trial.nextCallTimed()) {
    trial.timedUs[candidate][trial.round()] +=
        std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  }
  if (++trial.callsRun < trial.callsInTrial()) return;
  settleTrial(comm, args.tag(), trial);
  // A size of this class may have been memoised with the model's pick meanwhile.
  comm.scheduleMemo(args.kind) = {};
}

}  // namespace

ScheduleChoice chooseSchedule(const Communicator& comm, const CollectiveArgs& args) {
  const AlgorithmEntry* schedule = forcedFor(comm, args);
  if (schedule == nullptr) schedule = settledWinner(comm, args);
  if (schedule == nullptr) schedule = &defaultChoice(comm, args);
  return {schedule, pieceBytesFor(comm, args, *schedule)};
}

bool scheduleSettled(const Communicator& comm, const CollectiveArgs& args) {
  if (!trialsApply(comm, args)) return true;
  const ScheduleTrials* trials = comm.scheduleTrialsIfAny();
  const ScheduleTrial* trial = trials == nullptr ? nullptr : trials->find(args.kind, args.bytes());
  if (trial == nullptr) return modelRanking(comm, args).size() < 2;
  return trial->phase == ScheduleTrial::Phase::kSettled;
}

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type, args.tag().call);
  // The choice depends only on the kind and size (the rest is fixed for the communicator), so
  // repeated calls of one size (a training loop) skip it once it is settled.
  Communicator::ScheduleMemo& memo = comm.scheduleMemo(args.kind);
  if (memo.schedule != nullptr && memo.bytes == args.bytes()) {
    runSchedule(comm, args, *static_cast<const AlgorithmEntry*>(memo.schedule), memo.pieceBytes);
    return;
  }
  if (ScheduleTrial* trial = timingTrial(comm, args)) {
    if (trial->bytes == args.bytes() &&
        fits(*trial->candidates[trial->nextCandidate()], comm, args)) {
      runTrialCall(comm, args, *trial);
      return;
    }
    // Another size of a class still being timed: the model's pick, not memoised.
    const ScheduleChoice choice = chooseSchedule(comm, args);
    runSchedule(comm, args, *choice.schedule, choice.pieceBytes);
    return;
  }
  const ScheduleChoice choice = chooseSchedule(comm, args);
  memo = {args.bytes(), choice.schedule, choice.pieceBytes};
  runSchedule(comm, args, *choice.schedule, choice.pieceBytes);
}

}  // namespace hoop
