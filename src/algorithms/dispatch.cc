// Which schedule runs a collective. A stand-in for the cost-model tuner: the direct allreduce
// when all it sends fits in HOOP_DIRECT_MAX_BYTES, the ring otherwise; HOOP_ALGO forces one.
#include "algorithms/collective.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/logging.h"

namespace hoop {
namespace {

bool useDirectAllReduce(const Communicator& comm, const CollectiveArgs& args) {
  const std::string& forced = comm.config().algorithm;
  if (!forced.empty()) return forced == "direct";
  return args.bytes() * static_cast<size_t>(comm.size() - 1) <= comm.config().directMaxBytes;
}

}  // namespace

void runCollective(Communicator& comm, const CollectiveArgs& given) {
  CollectiveArgs args = given;
  args.seq = comm.nextCollectiveSeq();
  comm.beginOperation(str(opKindName(args.kind), " #", args.seq, " (", args.count, " x ",
                          dataTypeName(args.type), ")"));
  switch (args.kind) {
    case OpKind::kAllReduce:
      if (useDirectAllReduce(comm, args)) {
        directAllReduce(comm, args);
      } else {
        ringAllReduce(comm, args);
      }
      break;
    case OpKind::kAllGather: ringAllGather(comm, args); break;
    case OpKind::kReduceScatter: ringReduceScatter(comm, args); break;
    case OpKind::kBroadcast: chainBroadcast(comm, args); break;
    case OpKind::kReduce: chainReduce(comm, args); break;
    default:
      fail(hoopInternalError, "runCollective: ", opKindName(args.kind), " is not a collective");
  }
}

}  // namespace hoop
