#include "train/request_shape.h"

#include <sstream>

namespace hoop::train {

const char* kindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kAllReduce: return "allreduce";
    case RequestKind::kBroadcast: return "broadcast";
    case RequestKind::kAllGather: return "allgather";
    case RequestKind::kAllToAll: return "alltoall";
    case RequestKind::kAllToAllv: return "alltoallv";
    case RequestKind::kReduceScatter: return "reducescatter";
    case RequestKind::kBarrier: return "barrier";
  }
  return "unknown";
}

const char* typeName(hoopDataType_t type) {
  switch (type) {
    case hoopInt8: return "int8";
    case hoopUint8: return "uint8";
    case hoopInt32: return "int32";
    case hoopUint32: return "uint32";
    case hoopInt64: return "int64";
    case hoopUint64: return "uint64";
    case hoopFloat16: return "float16";
    case hoopFloat32: return "float32";
    case hoopFloat64: return "float64";
    case hoopBfloat16: return "bfloat16";
    default: return "unknown-type";
  }
}

const char* opName(hoopRedOp_t op) {
  switch (op) {
    case hoopSum: return "sum";
    case hoopProd: return "prod";
    case hoopMax: return "max";
    case hoopMin: return "min";
    case hoopAvg: return "avg";
    default: return "unknown-op";
  }
}

size_t elementSize(hoopDataType_t type) {
  switch (type) {
    case hoopInt8:
    case hoopUint8: return 1;
    case hoopFloat16:
    case hoopBfloat16: return 2;
    case hoopInt32:
    case hoopUint32:
    case hoopFloat32: return 4;
    case hoopInt64:
    case hoopUint64:
    case hoopFloat64: return 8;
    default: return 0;
  }
}

bool isFloatingPoint(hoopDataType_t type) {
  return type == hoopFloat16 || type == hoopBfloat16 || type == hoopFloat32 || type == hoopFloat64;
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
