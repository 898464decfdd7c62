// NCCL's questions to a communicator and about results: size, rank, device, the asynchronous
// error, and the texts of results and of the last error.
#include "nccl/nccl_comm.h"

using namespace hoop;
using namespace hoop::nccl;

namespace {

// The integer queries hoop answers: hoopInProgress while a non-blocking communicator initialises.
template <typename Ask>
ncclResult_t query(ncclComm_t comm, int* out, const char* call, Ask ask) {
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, call);
    if (out == nullptr) fail(hoopInvalidArgument, call, ": the output pointer is NULL");
    return passOn(ask(c->hoop, out), call);
  });
}

}  // namespace

HOOP_NCCL_API ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return query(comm, count, "ncclCommCount", hoopCommCount);
}

HOOP_NCCL_API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return query(comm, rank, "ncclCommUserRank", hoopCommUserRank);
}

HOOP_NCCL_API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guarded(comm, [&] {
    ncclComm* c = liveComm(comm, "ncclCommCuDevice");
    if (device == nullptr) fail(hoopInvalidArgument, "ncclCommCuDevice: device is NULL");
    if (c->device < 0) {
      fail(hoopInvalidUsage,
           "ncclCommCuDevice: the communicator has no CUDA device: the process had not used "
           "CUDA when it was made (hoop serves such communicators on host memory)");
    }
    *device = c->device;
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  constexpr const char* kCall = "ncclCommGetAsyncError";
  return guarded(comm, [&] {
    ncclComm* c = liveComm(comm, kCall);
    if (asyncError == nullptr) fail(hoopInvalidArgument, kCall, ": asyncError is NULL");
    if (c->hoop == nullptr) {
      // Made by a group that has not ended, or that failed to make it.
      if (c->notCreated.empty()) {
        *asyncError = ncclInProgress;
        return ncclSuccess;
      }
      *asyncError = ncclInvalidUsage;
      record(c, ncclInvalidUsage,
             str(kCall, ": the communicator was never created: ", c->notCreated));
      return ncclSuccess;
    }
    hoopResult_t state = hoopSuccess;
    passOn(hoopCommGetAsyncError(c->hoop, &state), kCall);
    *asyncError = toNccl(state);
    if (state != hoopSuccess && state != hoopInProgress) {
      // The failure's message is the communicator's last error in hoop.
      record(c, *asyncError, str(kCall, ": ", hoopGetLastError(c->hoop)));
    }
    return ncclSuccess;
  });
}

HOOP_NCCL_API const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with HOOP_DEBUG=WARN for details)";
    case ncclSystemError: return "unhandled system error (network, memory, file descriptors)";
    case ncclInternalError: return "internal error: a bug in hoop";
    case ncclInvalidArgument: return "invalid argument (ncclGetLastError says which)";
    case ncclInvalidUsage:
      return "invalid usage, or a call hoop does not serve (ncclGetLastError says why)";
    case ncclRemoteError: return "remote process exited, timed out or a network error occurred";
    case ncclInProgress: return "operation in progress";
    default: return "unknown result code";
  }
}

HOOP_NCCL_API const char* ncclGetLastError(ncclComm_t comm) {
  if (comm != nullptr && isLive(comm)) {
    std::lock_guard lock(comm->mutex);
    if (!comm->lastError.empty()) threadLastError() = comm->lastError;
  }
  return threadLastError().c_str();
}

HOOP_NCCL_API void ncclResetDebugInit(void) {
  // hoop reads HOOP_DEBUG and its companions once per process; NCCL_DEBUG is not hoop's.
}

HOOP_NCCL_SECOND_NAME(CommCount);
HOOP_NCCL_SECOND_NAME(CommUserRank);
HOOP_NCCL_SECOND_NAME(CommCuDevice);
HOOP_NCCL_SECOND_NAME(CommGetAsyncError);
HOOP_NCCL_SECOND_NAME(GetErrorString);
HOOP_NCCL_SECOND_NAME(GetLastError);
HOOP_NCCL_SECOND_NAME(ResetDebugInit);
