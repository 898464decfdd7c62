// Which schedule runs a collective. A stand-in for the cost-model tuner: the direct allreduce
// when all it sends fits in HOOP_DIRECT_MAX_BYTES; above that the hierarchical one when ranks
// span several hosts with the same number (two or more) on each, else the ring. HOOP_ALGO forces
// one; a forced hierarchical schedule on a job it cannot serve runs the ring instead.
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

constexpr Schedule kDirect{directAllReduce, "direct"};
constexpr Schedule kRing{ringAllReduce, "ring"};
constexpr Schedule kHierarchical{hierarchicalAllReduce, "hierarchical"};

Schedule allReduceSchedule(const Communicator& comm, const CollectiveArgs& args) {
  const std::string& forced = comm.config().algorithm;
  if (forced == "direct") return kDirect;
  if (forced == "ring") return kRing;
  if (forced == "hierarchical") return hierarchyFits(comm) ? kHierarchical : kRing;
  if (args.bytes() * static_cast<size_t>(comm.size() - 1) <= comm.config().directMaxBytes) {
    return kDirect;
  }
  return hierarchyFits(comm) ? kHierarchical : kRing;
}

Schedule onlySchedule(OpKind kind) {
  switch (kind) {
    case OpKind::kAllGather: return {ringAllGather, "ring"};
    case OpKind::kReduceScatter: return {ringReduceScatter, "ring"};
    case OpKind::kBroadcast: return {chainBroadcast, "pipelined chain"};
    case OpKind::kReduce: return {chainReduce, "pipelined chain"};
    case OpKind::kAllToAll: return {pairwiseAllToAll, "pairwise exchange"};
    default: fail(hoopInternalError, "runCollective: ", opKindName(kind), " is not a collective");
  }
}

}  // namespace

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(args.kind, args.seq, args.count, args.type);
  Schedule schedule =
      args.kind == OpKind::kAllReduce ? allReduceSchedule(comm, args) : onlySchedule(args.kind);
  comm.noteSchedule(args.kind, schedule.name, args.bytes());
  schedule.run(comm, args);
}

}  // namespace hoop
