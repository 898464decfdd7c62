// Which schedule runs a collective: HOOP_ALGO's rule for the call when it names one that can
// serve it (algo_overrides.h), else hoop's own choice.
//
// hoop's choice: the schedule the cost model (tuner.h) predicts fastest among those that can
// serve the call (allreduce, allgather, broadcast, reduce), with the piece size it predicts
// fastest for pipelined ones; the others have one schedule. Every input to the choice is the
// same on every rank, so every rank runs the same schedule.
#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
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

// The cheapest schedule of the call's kind the cost model knows among those that fit; ties go to
// the earlier entry. Nullptr when the model knows none of them.
const AlgorithmEntry* fastest(const Communicator& comm, const CollectiveArgs& args) {
  const CallShape shape = callShape(comm, args);
  const AlgorithmEntry* best = nullptr;
  double bestUs = 0;
  for (const AlgorithmEntry& candidate : algorithmRegistry()) {
    if (candidate.kind != args.kind || !fits(candidate, comm, args)) continue;
    const std::optional<double> predicted =
        predictUs(args.kind, candidate.name, shape, comm.config().costModel);
    if (predicted && (best == nullptr || *predicted < bestUs)) {
      best = &candidate;
      bestUs = *predicted;
    }
  }
  return best;
}

const AlgorithmEntry& defaultChoice(const Communicator& comm, const CollectiveArgs& args) {
  if (const AlgorithmEntry* modelled = fastest(comm, args)) return *modelled;
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

}  // namespace

ScheduleChoice chooseSchedule(const Communicator& comm, const CollectiveArgs& args) {
  const AlgorithmEntry* schedule = nullptr;
  const std::string_view forced =
      comm.config().algorithms.forced(args.kind, reportedBytes(comm, args));
  if (!forced.empty()) {
    const AlgorithmEntry& wanted = entry(args.kind, forced);
    if (fits(wanted, comm, args)) schedule = &wanted;
  }
  if (schedule == nullptr) schedule = &defaultChoice(comm, args);
  return {schedule, pieceBytesFor(comm, args, *schedule)};
}

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type, args.tag().call);
  // The choice depends only on the kind and size (the rest is fixed for the communicator).
  Communicator::ScheduleMemo& memo = comm.scheduleMemo(args.kind);
  if (memo.schedule == nullptr || memo.bytes != args.bytes()) {
    const ScheduleChoice choice = chooseSchedule(comm, args);
    memo = {args.bytes(), choice.schedule, choice.pieceBytes};
  }
  const auto& chosen = *static_cast<const AlgorithmEntry*>(memo.schedule);
  args.pieceBytes = memo.pieceBytes;
  comm.noteSchedule(args.kind, chosen.logName.data(), args.bytes(), args.pieceBytes);
  const bool reduction = args.kind == OpKind::kAllReduce || args.kind == OpKind::kReduce ||
                         args.kind == OpKind::kReduceScatter;
  if (reduction && comm.size() == 1) {
    // The reduction of one input is that input (avg divides by one): no schedule needs to
    // know, so none checks.
    finishAverage(args.recv, args.send, args.count, args.type, args.op, 1);
    return;
  }
  chosen.run(comm, args);
}

}  // namespace hoop
