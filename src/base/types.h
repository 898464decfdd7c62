// Element types, reduction operators and operation kinds as the core sees them, with their C API
// values, and the project's one table of their sizes and names.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
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

// The one table of element types for the whole project (the core, hoop-perf, the training
// engine, the Python module): size and every name each type goes by. `name` is the one hoop
// prints (nccl-tests' spelling: logs, errors, hoop-perf's "type" column); `sizedName` is numpy's
// and torch's (the Python module's hoop.dtype attributes); `aliases` are further spellings a
// command line may use (the C API's hoopChar, common short forms). Unused aliases are empty.
struct DataTypeInfo {
  DataType type;
  size_t size;
  std::string_view name;
  std::string_view sizedName;
  std::array<std::string_view, 2> aliases;
};

// In enum order, which is also the order hoop-perf's `-d all` runs them (nccl-tests' order).
inline constexpr std::array<DataTypeInfo, kNumDataTypes> kDataTypes = {{
    {DataType::kInt8, 1, "int8", "int8", {"char", ""}},
    {DataType::kUint8, 1, "uint8", "uint8", {}},
    {DataType::kInt32, 4, "int32", "int32", {}},
    {DataType::kUint32, 4, "uint32", "uint32", {}},
    {DataType::kInt64, 8, "int64", "int64", {}},
    {DataType::kUint64, 8, "uint64", "uint64", {}},
    {DataType::kFloat16, 2, "half", "float16", {"fp16", "f16"}},
    {DataType::kFloat32, 4, "float", "float32", {"fp32", "f32"}},
    {DataType::kFloat64, 8, "double", "float64", {"fp64", "f64"}},
    {DataType::kBfloat16, 2, "bfloat16", "bfloat16", {"bf16", ""}},
}};

// Reduction operators: `name` is printed and parsed; no other spellings exist.
struct RedOpInfo {
  RedOp op;
  std::string_view name;
};

inline constexpr std::array<RedOpInfo, kNumRedOps> kRedOps = {{
    {RedOp::kSum, "sum"},
    {RedOp::kProd, "prod"},
    {RedOp::kMax, "max"},
    {RedOp::kMin, "min"},
    {RedOp::kAvg, "avg"},
}};

// The tables are indexed by the enum's value.
static_assert([] {
  for (size_t i = 0; i < kDataTypes.size(); ++i) {
    if (static_cast<size_t>(kDataTypes[i].type) != i) return false;
  }
  for (size_t i = 0; i < kRedOps.size(); ++i) {
    if (static_cast<size_t>(kRedOps[i].op) != i) return false;
  }
  return true;
}());

constexpr bool isDataType(int value) { return value >= 0 && value < kNumDataTypes; }
constexpr bool isRedOp(int value) { return value >= 0 && value < kNumRedOps; }

constexpr size_t dataTypeSize(DataType type) {
  return isDataType(static_cast<int>(type)) ? kDataTypes[static_cast<size_t>(type)].size : 0;
}

constexpr std::string_view dataTypeName(DataType type) {
  return isDataType(static_cast<int>(type)) ? kDataTypes[static_cast<size_t>(type)].name : "?";
}

constexpr std::string_view redOpName(RedOp op) {
  return isRedOp(static_cast<int>(op)) ? kRedOps[static_cast<size_t>(op)].name : "?";
}

// Any of a type's spellings, exactly (case matters, as it always has on hoop's command lines).
constexpr std::optional<DataType> parseDataType(std::string_view text) {
  if (text.empty()) return std::nullopt;  // would match an unused alias
  for (const DataTypeInfo& info : kDataTypes) {
    if (text == info.name || text == info.sizedName) return info.type;
    for (std::string_view alias : info.aliases) {
      if (text == alias) return info.type;
    }
  }
  return std::nullopt;
}

constexpr std::optional<RedOp> parseRedOp(std::string_view text) {
  for (const RedOpInfo& info : kRedOps) {
    if (text == info.name) return info.op;
  }
  return std::nullopt;
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

// Every name an operation goes by: `name` is the one logs and errors print ("send/recv");
// `word` is the single word command lines and tools use ("sendrecv"), the same where the name is
// one word already. parseOpKind takes either. Both are literals, so .data() is a terminated C
// string where a caller needs one.
struct OpKindInfo {
  OpKind kind;
  std::string_view name;
  std::string_view word;
};

inline constexpr OpKindInfo kOpKinds[] = {
    {OpKind::kAllReduce, "allreduce", "allreduce"},
    {OpKind::kBroadcast, "broadcast", "broadcast"},
    {OpKind::kReduce, "reduce", "reduce"},
    {OpKind::kAllGather, "allgather", "allgather"},
    {OpKind::kReduceScatter, "reducescatter", "reducescatter"},
    {OpKind::kSendRecv, "send/recv", "sendrecv"},
    {OpKind::kBarrier, "barrier", "barrier"},
    {OpKind::kSetup, "connection setup", "setup"},
    {OpKind::kAllToAll, "alltoall", "alltoall"},
    {OpKind::kSetAlgorithms, "set algorithms", "setalgorithms"},
};

constexpr const OpKindInfo* findOpKind(OpKind kind) {
  for (const OpKindInfo& info : kOpKinds) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

constexpr std::string_view opKindName(OpKind kind) {
  const OpKindInfo* info = findOpKind(kind);
  return info ? info->name : "unknown operation";
}

constexpr std::string_view opKindWord(OpKind kind) {
  const OpKindInfo* info = findOpKind(kind);
  return info ? info->word : "unknown";
}

constexpr std::optional<OpKind> parseOpKind(std::string_view text) {
  for (const OpKindInfo& info : kOpKinds) {
    if (text == info.name || text == info.word) return info.kind;
  }
  return std::nullopt;
}

}  // namespace hoop
