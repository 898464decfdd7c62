#include "nccl/nccl_comm.h"

#include <unordered_set>

namespace hoop::nccl {
namespace {

struct Handles {
  std::mutex mutex;
  std::unordered_set<ncclComm*> live;
};
Handles& handles() {
  static Handles registry;
  return registry;
}

}  // namespace

ncclResult_t toNccl(hoopResult_t result) {
  switch (result) {
    case hoopSuccess: return ncclSuccess;
    case hoopUnhandledCudaError: return ncclUnhandledCudaError;
    case hoopSystemError: return ncclSystemError;
    case hoopInternalError: return ncclInternalError;
    case hoopInvalidArgument: return ncclInvalidArgument;
    case hoopInvalidUsage: return ncclInvalidUsage;
    case hoopRemoteError: return ncclRemoteError;
    case hoopInProgress: return ncclInProgress;
    case hoopTimeout: return ncclRemoteError;
    default: return ncclInternalError;
  }
}

void publish(ncclComm* comm) {
  std::lock_guard lock(handles().mutex);
  handles().live.insert(comm);
}

bool isLive(ncclComm* comm) {
  std::lock_guard lock(handles().mutex);
  return handles().live.count(comm) != 0;
}

void withdraw(ncclComm* comm, const char* call) {
  liveComm(comm, call);
  std::lock_guard lock(handles().mutex);
  handles().live.erase(comm);
}

ncclComm* liveComm(ncclComm_t comm, const char* call) {
  if (comm == nullptr) fail(hoopInvalidArgument, call, ": comm is NULL");
  if (!isLive(comm)) {
    fail(hoopInvalidUsage, call,
         ": comm is not a live communicator (destroyed or aborted already, or never created)");
  }
  return comm;
}

ncclComm* usableComm(ncclComm_t comm, const char* call) {
  liveComm(comm, call);
  if (comm->hoop == nullptr) {
    if (!comm->notCreated.empty()) {
      fail(hoopInvalidUsage, call, ": the communicator was never created: ", comm->notCreated);
    }
    fail(hoopInvalidUsage, call,
         ": the communicator is created at the ncclGroupEnd of the group that asked for it; "
         "call ncclGroupEnd before using it");
  }
  return comm;
}

std::string& threadLastError() {
  thread_local std::string message;
  return message;
}

ncclResult_t record(ncclComm* comm, ncclResult_t code, const std::string& message) {
  threadLastError() = message;
  if (comm != nullptr && isLive(comm)) {
    std::lock_guard lock(comm->mutex);
    comm->lastError = message;
  }
  return code;
}

std::string hoopFailure(const char* call) {
  // hoop keeps every failed call's message as the calling thread's last error.
  return str(call, ": ", hoopGetLastError(nullptr));
}

ncclResult_t passOn(hoopResult_t result, const char* call) {
  if (result == hoopSuccess || result == hoopInProgress) return toNccl(result);
  fail(result, hoopFailure(call));
}

const char* typeName(ncclDataType_t type) {
  switch (type) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    case ncclFloat8e4m3: return "ncclFloat8e4m3";
    case ncclFloat8e5m2: return "ncclFloat8e5m2";
    default: return "not an ncclDataType_t";
  }
}

size_t typeSize(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: fail(hoopInvalidArgument, "invalid datatype ", static_cast<int>(type));
  }
}

bool isFp8(ncclDataType_t type) { return type == ncclFloat8e4m3 || type == ncclFloat8e5m2; }

hoopDataType_t movedType(ncclDataType_t type, const char* call) {
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= ncclNumTypes) {
    fail(hoopInvalidArgument, call, ": invalid datatype ", static_cast<int>(type));
  }
  // Moving fp8 values is moving their bytes.
  return isFp8(type) ? hoopUint8 : static_cast<hoopDataType_t>(type);
}

hoopDataType_t reducedType(ncclDataType_t type, const char* call) {
  const hoopDataType_t moved = movedType(type, call);
  if (isFp8(type)) {
    fail(hoopInvalidUsage, call, ": datatype ", typeName(type), " (", static_cast<int>(type),
         "): hoop does not reduce fp8 values (it moves them: broadcast, all-gather, gather, "
         "scatter, all-to-all, send and receive take them)");
  }
  return moved;
}

}  // namespace hoop::nccl
