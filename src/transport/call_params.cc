#include "base/error.h"
#include "transport/connection.h"

namespace hoop {

std::string describeCall(OpKind kind, uint32_t seq, const CallParams& call) {
  // Only what the kind of call uses: an allreduce has no root, a broadcast no op.
  const bool reduces =
      kind == OpKind::kAllReduce || kind == OpKind::kReduce || kind == OpKind::kReduceScatter;
  const bool rooted = kind == OpKind::kBroadcast || kind == OpKind::kReduce;
  return str(opKindName(kind), " #", seq, " (", call.count, " x ",
             dataTypeName(static_cast<DataType>(call.type)),
             reduces ? str(", ", redOpName(static_cast<RedOp>(call.op))) : std::string(),
             rooted ? str(", root ", call.root) : std::string(), ")");
}

}  // namespace hoop
