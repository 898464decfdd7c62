// Element types and reduction operators as the core sees them, with their C API values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace hoop {

// Values equal hoopDataType_t's so conversion at the C boundary is a cast after validation.
enum class DataType : uint8_t {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};
inline constexpr int kNumDataTypes = 10;

// Values equal hoopRedOp_t's.
enum class RedOp : uint8_t { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
inline constexpr int kNumRedOps = 5;

constexpr size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8: return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16: return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64: return 8;
  }
  return 0;
}

constexpr std::string_view dataTypeName(DataType type) {
  switch (type) {
    case DataType::kInt8: return "int8";
    case DataType::kUint8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kUint32: return "uint32";
    case DataType::kInt64: return "int64";
    case DataType::kUint64: return "uint64";
    case DataType::kFloat16: return "half";
    case DataType::kFloat32: return "float";
    case DataType::kFloat64: return "double";
    case DataType::kBfloat16: return "bfloat16";
  }
  return "?";
}

constexpr std::string_view redOpName(RedOp op) {
  switch (op) {
    case RedOp::kSum: return "sum";
    case RedOp::kProd: return "prod";
    case RedOp::kMax: return "max";
    case RedOp::kMin: return "min";
    case RedOp::kAvg: return "avg";
  }
  return "?";
}

constexpr bool isFloatingPoint(DataType type) {
  return type == DataType::kFloat16 || type == DataType::kFloat32 || type == DataType::kFloat64 ||
         type == DataType::kBfloat16;
}

}  // namespace hoop

namespace hoop {

// What a message on a data connection belongs to; carried in every frame so a receiver can tell
// a mismatched call (another collective, another sequence number) from its own.
enum class OpKind : uint8_t {
  kAllReduce = 1,
  kBroadcast = 2,
  kReduce = 3,
  kAllGather = 4,
  kReduceScatter = 5,
  kSendRecv = 6,
  kBarrier = 7,
  kSetup = 8,  // connection setup between two ranks (e.g. agreeing on a shm segment)
  kAllToAll = 9,
  kSetAlgorithms = 10,  // hoopCommSetAlgorithms: the ranks agree on the rules they adopt
};

constexpr std::string_view opKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAllReduce: return "allreduce";
    case OpKind::kBroadcast: return "broadcast";
    case OpKind::kReduce: return "reduce";
    case OpKind::kAllGather: return "allgather";
    case OpKind::kReduceScatter: return "reducescatter";
    case OpKind::kSendRecv: return "send/recv";
    case OpKind::kBarrier: return "barrier";
    case OpKind::kSetup: return "connection setup";
    case OpKind::kAllToAll: return "alltoall";
    case OpKind::kSetAlgorithms: return "set algorithms";
  }
  return "unknown operation";
}

}  // namespace hoop
