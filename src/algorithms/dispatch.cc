// Which schedule runs a collective: HOOP_ALGO's rule for the call when it names one that can
// serve it (algo_overrides.h), else hoop's own choice.
//
// hoop's choice: for allreduce the schedule the cost model (tuner.h) predicts fastest among those
// that can serve the call; allgather and broadcast are hierarchical where several hosts have the
// same number (two or more) of ranks each, else the ring (for broadcast the pipelined chain along
// it); the others have one schedule. Every input to the choice is the same on every rank, so
// every rank runs the same schedule.
#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
#include "algorithms/tuner.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/logging.h"

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

// The cheapest allreduce the cost model knows among those that fit; ties go to the earlier entry.
const AlgorithmEntry& fastestAllReduce(const Communicator& comm, const CollectiveArgs& args) {
  const CallShape shape = callShape(comm, args);
  const AlgorithmEntry* best = nullptr;
  double bestUs = 0;
  for (const AlgorithmEntry& candidate : algorithmRegistry()) {
    if (candidate.kind != OpKind::kAllReduce || !fits(candidate, comm, args)) continue;
    const std::optional<double> predicted =
        predictAllReduceUs(candidate.name, shape, comm.config().costModel);
    if (predicted && (best == nullptr || *predicted < bestUs))
      best = &candidate, bestUs = *predicted;
  }
  return best != nullptr ? *best : entry(OpKind::kAllReduce, "ring");
}

const AlgorithmEntry& defaultChoice(const Communicator& comm, const CollectiveArgs& args) {
  // The first that fits, in order of preference.
  auto firstFitting = [&](std::initializer_list<std::string_view> names) -> const AlgorithmEntry& {
    for (std::string_view name : names) {
      const AlgorithmEntry& candidate = entry(args.kind, name);
      if (fits(candidate, comm, args)) return candidate;
    }
    fail(hoopInternalError, "no ", opKindName(args.kind), " schedule fits");
  };
  switch (args.kind) {
    case OpKind::kAllReduce: return fastestAllReduce(comm, args);
    case OpKind::kAllGather:
    case OpKind::kBroadcast: return firstFitting({"hierarchical", "ring"});
    case OpKind::kReduceScatter:
    case OpKind::kReduce: return entry(args.kind, "ring");
    case OpKind::kAllToAll: return entry(args.kind, "pairwise");
    default:
      fail(hoopInternalError, "runCollective: ", opKindName(args.kind), " is not a collective");
  }
}

}  // namespace

const AlgorithmEntry& chooseSchedule(const Communicator& comm, const CollectiveArgs& args) {
  const std::string_view forced =
      comm.config().algorithms.forced(args.kind, reportedBytes(comm, args));
  if (!forced.empty()) {
    const AlgorithmEntry& wanted = entry(args.kind, forced);
    if (fits(wanted, comm, args)) return wanted;
  }
  return defaultChoice(comm, args);
}

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type);
  // The choice depends only on the kind and size (the rest is fixed for the communicator).
  Communicator::ScheduleMemo& memo = comm.scheduleMemo(args.kind);
  if (memo.schedule == nullptr || memo.bytes != args.bytes()) {
    memo = {args.bytes(), &chooseSchedule(comm, args)};
  }
  const auto& chosen = *static_cast<const AlgorithmEntry*>(memo.schedule);
  comm.noteSchedule(args.kind, chosen.logName.data(), args.bytes());
  chosen.run(comm, args);
}

}  // namespace hoop
