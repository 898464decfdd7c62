#include "core/error.h"
#include "transport/connection.h"

namespace hoop {

std::string describeCall(OpKind kind, uint32_t seq, const CallParams& call) {
  return str(opKindName(kind), " #", seq, " (", call.count, " x ",
             dataTypeName(static_cast<DataType>(call.type)), ", ",
             redOpName(static_cast<RedOp>(call.op)), ", root ", call.root, ")");
}

}  // namespace hoop
