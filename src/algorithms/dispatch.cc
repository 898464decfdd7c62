// Which schedule runs a collective. A stand-in for the cost-model tuner: on one host over shared
// memory the one-shot allreduce up to its eager buffer size (8 KiB) and 8 ranks; else the direct
// allreduce when all it sends fits in HOOP_DIRECT_MAX_BYTES; above that, and for allgather and
// broadcast at every size, the hierarchical schedule when ranks span several hosts with the same
// number (two or more) on each, else the ring (for broadcast the chain along it). HOOP_ALGO forces
// one; a forced schedule that cannot serve a collective or a job runs the ring instead.
#include "algorithms/collective.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/logging.h"

namespace hoop {
namespace {

bool hierarchyFits(const Communicator& comm) {
  return comm.hostCount() > 1 && comm.localRing().size() > 1;
}

// A schedule and its name, for the log.
struct Schedule {
  void (*run)(Communicator&, const CollectiveArgs&);
  const char* name;
};

constexpr Schedule kOneShot{oneShotAllReduce, "one-shot (shared memory)"};
constexpr Schedule kDirect{directAllReduce, "direct"};
constexpr Schedule kRing{ringAllReduce, "ring"};
constexpr Schedule kHierarchical{hierarchicalAllReduce, "hierarchical"};

Schedule allReduceSchedule(const Communicator& comm, const CollectiveArgs& args) {
  const std::string& forced = comm.config().algorithm;
  if (forced == "oneshot") return oneShotFits(comm, args) ? kOneShot : kRing;
  if (forced == "direct") return kDirect;
  if (forced == "ring") return kRing;
  if (forced == "hierarchical") return hierarchyFits(comm) ? kHierarchical : kRing;
  if (forced.empty() && oneShotFits(comm, args)) return kOneShot;
  if (args.bytes() * static_cast<size_t>(comm.size() - 1) <= comm.config().directMaxBytes) {
    return kDirect;
  }
  return hierarchyFits(comm) ? kHierarchical : kRing;
}

// Allgather and broadcast: the flat schedule, or the hierarchical one where it fits and nothing
// else is forced.
Schedule flatOrHierarchical(const Communicator& comm, Schedule flat, Schedule hierarchical) {
  const std::string& forced = comm.config().algorithm;
  const bool wantsHierarchy = forced.empty() || forced == "hierarchical";
  return wantsHierarchy && hierarchyFits(comm) ? hierarchical : flat;
}

Schedule schedule(const Communicator& comm, const CollectiveArgs& args) {
  switch (args.kind) {
    case OpKind::kAllReduce: return allReduceSchedule(comm, args);
    case OpKind::kAllGather:
      return flatOrHierarchical(comm, {ringAllGather, "ring"},
                                {hierarchicalAllGather, "hierarchical"});
    case OpKind::kBroadcast:
      return flatOrHierarchical(comm, {chainBroadcast, "pipelined chain"},
                                {hierarchicalBroadcast, "hierarchical chains"});
    case OpKind::kReduceScatter: return {ringReduceScatter, "ring"};
    case OpKind::kReduce: return {chainReduce, "pipelined chain"};
    case OpKind::kAllToAll: return {pairwiseAllToAll, "pairwise exchange"};
    default:
      fail(hoopInternalError, "runCollective: ", opKindName(args.kind), " is not a collective");
  }
}

}  // namespace

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type);
  const Schedule chosen = schedule(comm, args);
  comm.noteSchedule(args.kind, chosen.name, args.bytes());
  chosen.run(comm, args);
}

}  // namespace hoop
