#include "train/request_shape.h"

#include <sstream>

#include "base/types.h"

namespace hoop::train {

const char* kindName(RequestKind kind) {
  // Names from the project's one table (base/types.h); its literals end in a NUL.
  switch (kind) {
    case RequestKind::kAllReduce: return opKindWord(OpKind::kAllReduce).data();
    case RequestKind::kBroadcast: return opKindWord(OpKind::kBroadcast).data();
    case RequestKind::kAllGather: return opKindWord(OpKind::kAllGather).data();
    case RequestKind::kAllToAll: return opKindWord(OpKind::kAllToAll).data();
    case RequestKind::kAllToAllv: return "alltoallv";  // the engine's own: no OpKind of its own
    case RequestKind::kReduceScatter: return opKindWord(OpKind::kReduceScatter).data();
    case RequestKind::kBarrier: return opKindWord(OpKind::kBarrier).data();
  }
  return "unknown";
}

// The C API's values equal the core's (base/types.h), which holds the one table of names and
// sizes; out-of-range values from a caller are caught here.
static_assert(hoopNumTypes == kNumDataTypes, "the C API's types must match the core's table");
static_assert(hoopNumOps == kNumRedOps, "the C API's operations must match the core's table");

bool knownType(hoopDataType_t type) { return isDataType(type); }
bool knownOp(hoopRedOp_t op) { return isRedOp(op); }

namespace {

DataType coreType(hoopDataType_t type) { return static_cast<DataType>(type); }

}  // namespace

std::string_view typeName(hoopDataType_t type) {
  return knownType(type) ? dataTypeName(coreType(type)) : "unknown-type";
}

std::string_view opName(hoopRedOp_t op) {
  return knownOp(op) ? redOpName(static_cast<RedOp>(op)) : "unknown-op";
}

size_t elementSize(hoopDataType_t type) {
  return knownType(type) ? dataTypeSize(coreType(type)) : 0;
}

bool isFloatingPoint(hoopDataType_t type) {
  return knownType(type) && hoop::isFloatingPoint(coreType(type));
}

std::string describe(const RequestShape& shape) {
  std::ostringstream out;
  out << kindName(shape.kind);
  if (shape.kind == RequestKind::kBarrier) return out.str();
  out << ' ' << typeName(shape.type) << '[' << shape.count << ']';
  switch (shape.kind) {
    case RequestKind::kAllReduce:
    case RequestKind::kReduceScatter: out << ' ' << opName(shape.op); break;
    case RequestKind::kBroadcast: out << " root " << shape.root; break;
    default: break;
  }
  if (shape.prescale != 1.0) out << " prescale " << shape.prescale;
  if (shape.postscale != 1.0) out << " postscale " << shape.postscale;
  return out.str();
}

bool countIsPerRank(RequestKind kind) {
  return kind == RequestKind::kAllGather || kind == RequestKind::kAllToAllv;
}

bool sameRequest(const RequestShape& a, const RequestShape& b) {
  if (a.kind == b.kind && countIsPerRank(a.kind)) return a.type == b.type;
  return a == b;
}

size_t inputElements(const RequestShape& shape, int nranks) {
  const size_t ranks = static_cast<size_t>(nranks);
  switch (shape.kind) {
    case RequestKind::kAllToAll:
    case RequestKind::kReduceScatter: return shape.count * ranks;
    case RequestKind::kBarrier: return 0;
    default: return shape.count;
  }
}

size_t outputElements(const RequestShape& shape, int nranks) {
  const size_t ranks = static_cast<size_t>(nranks);
  switch (shape.kind) {
    case RequestKind::kAllToAll: return shape.count * ranks;
    case RequestKind::kBarrier:
    case RequestKind::kAllGather:  // sized by the allocator once the counts are known
    case RequestKind::kAllToAllv: return 0;
    default: return shape.count;
  }
}

}  // namespace hoop::train
