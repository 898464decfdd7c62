#include "api/c_api_redop.h"

#include <climits>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "api/c_api_arguments.h"

using namespace hoop;
using namespace hoop::capi;

namespace hoop::capi {
namespace {

struct MadeOp {
  hoopComm* owner;
  PreMulFactor factor;
};

struct OpRegistry {
  std::mutex mutex;
  std::unordered_map<int, MadeOp> live;
  int next = hoopNumOps;
};
OpRegistry& ops() {
  static OpRegistry registry;
  return registry;
}

// A value no live op has, after the last one given (wrapping back to hoopNumOps past INT_MAX).
int freshValue(OpRegistry& registry) {
  while (registry.live.count(registry.next) != 0) {
    registry.next = registry.next == INT_MAX ? hoopNumOps : registry.next + 1;
  }
  const int value = registry.next;
  registry.next = value == INT_MAX ? hoopNumOps : value + 1;
  return value;
}

std::string nameOf(hoopDataType_t type) {
  return std::string(dataTypeName(static_cast<DataType>(type)));
}

// The live op `op` made for `comm`; fails naming it otherwise. Holds the registry's lock.
MadeOp& madeFor(OpRegistry& registry, hoopComm* comm, hoopRedOp_t op, const char* call) {
  const auto found = registry.live.find(static_cast<int>(op));
  if (found == registry.live.end()) {
    fail(hoopInvalidArgument, call, ": reduction op ", static_cast<int>(op),
         " is neither built in (0..", hoopNumOps - 1,
         ") nor a live op of hoopRedOpCreatePreMulSum (destroyed, or never made)");
  }
  if (found->second.owner != comm) {
    fail(hoopInvalidArgument, call, ": reduction op ", static_cast<int>(op),
         " was made by hoopRedOpCreatePreMulSum for another communicator; an op serves only the "
         "communicator it was made for");
  }
  return found->second;
}

}  // namespace

std::optional<PreMulFactor> premultiplyOf(hoopComm* comm, hoopRedOp_t op, hoopDataType_t datatype,
                                          const char* call) {
  if (static_cast<int>(op) < hoopNumOps) {
    checkOp(op, call);
    return std::nullopt;
  }
  OpRegistry& registry = ops();
  std::lock_guard lock(registry.mutex);
  const PreMulFactor& factor = madeFor(registry, comm, op, call).factor;
  if (factor.type != static_cast<DataType>(datatype)) {
    fail(hoopInvalidArgument, call, ": reduction op ", static_cast<int>(op), " was made for ",
         dataTypeName(factor.type), " and the call is on ", nameOf(datatype),
         " (a premultiplied sum's factor has the call's datatype)");
  }
  return factor;
}

void forgetOps(hoopComm* comm) {
  OpRegistry& registry = ops();
  std::lock_guard lock(registry.mutex);
  std::erase_if(registry.live, [comm](const auto& entry) { return entry.second.owner == comm; });
}

}  // namespace hoop::capi

HOOP_API hoopResult_t hoopRedOpCreatePreMulSum(hoopRedOp_t* op, void* scalar,
                                               hoopDataType_t datatype,
                                               hoopScalarResidence_t residence, hoopComm_t comm) {
  constexpr const char* kCall = "hoopRedOpCreatePreMulSum";
  return guarded(comm, [&] {
    // An op is this process's alone: a communicator still initialising may have one made.
    checkedComm(comm, kCall);
    checkNotFinalized(comm, kCall);
    if (op == nullptr) fail(hoopInvalidArgument, kCall, ": op is NULL");
    checkType(datatype, kCall);
    if (scalar == nullptr) fail(hoopInvalidArgument, kCall, ": scalar is NULL");
    PreMulFactor factor;
    factor.type = static_cast<DataType>(datatype);
    switch (residence) {
      case hoopScalarHostImmediate:
        std::memcpy(factor.value.data(), scalar, dataTypeSize(factor.type));
        break;
      case hoopScalarDevice:
        factor.source = memoryOf(scalar) == MemoryKind::kDevice
                            ? PreMulFactor::Source::kDevicePointer
                            : PreMulFactor::Source::kHostPointer;
        factor.pointer = scalar;
        break;
      default:
        fail(hoopInvalidArgument, kCall, ": residence ", static_cast<int>(residence),
             " is not a hoopScalarResidence_t (hoopScalarDevice 0, hoopScalarHostImmediate 1)");
    }
    OpRegistry& registry = ops();
    std::lock_guard lock(registry.mutex);
    const int value = freshValue(registry);
    registry.live.emplace(value, MadeOp{comm, factor});
    *op = static_cast<hoopRedOp_t>(value);
  });
}

HOOP_API hoopResult_t hoopRedOpDestroy(hoopRedOp_t op, hoopComm_t comm) {
  constexpr const char* kCall = "hoopRedOpDestroy";
  return guarded(comm, [&] {
    checkedComm(comm, kCall);
    if (static_cast<int>(op) >= 0 && static_cast<int>(op) < hoopNumOps) {
      fail(hoopInvalidArgument, kCall, ": reduction op ", static_cast<int>(op),
           " is built in; only ops of hoopRedOpCreatePreMulSum are destroyed");
    }
    OpRegistry& registry = ops();
    std::lock_guard lock(registry.mutex);
    madeFor(registry, comm, op, kCall);
    registry.live.erase(static_cast<int>(op));
  });
}
