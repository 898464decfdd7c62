// The C API's questions to a communicator: its size and ranks, its asynchronous error, and the
// text of a result code or of the last error.
#include <optional>
#include <string>

#include "api/c_api_handle.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

// The integer queries: check the handle and the out-pointer, then read one value.
// A non-blocking communicator still initialising answers hoopInProgress, as NCCL's does.
template <typename Read>
hoopResult_t query(hoopComm_t comm, int* out, const char* call, Read read) {
  bool initialising = false;
  hoopResult_t status = guarded(nullptr, [&] {
    checkedComm(comm, call);
    if (out == nullptr) fail(hoopInvalidArgument, call, ": the output pointer is NULL");
    if (comm->queue != nullptr && !comm->ready.load(std::memory_order_acquire) &&
        comm->queue->status(nullptr) == hoopInProgress &&
        !comm->ready.load(std::memory_order_acquire)) {
      initialising = true;  // (ready again: it may have finished while the queue was asked)
      return;
    }
    checkInitialised(comm, call);
    *out = read(*comm->impl);
  });
  return status == hoopSuccess && initialising ? hoopInProgress : status;
}

}  // namespace

HOOP_API hoopResult_t hoopCommCount(const hoopComm_t comm, int* count) {
  return query(comm, count, "hoopCommCount", [](const Communicator& c) { return c.size(); });
}

HOOP_API hoopResult_t hoopCommUserRank(const hoopComm_t comm, int* rank) {
  return query(comm, rank, "hoopCommUserRank", [](const Communicator& c) { return c.rank(); });
}

HOOP_API hoopResult_t hoopCommLocalRank(const hoopComm_t comm, int* localRank) {
  return query(comm, localRank, "hoopCommLocalRank",
               [](const Communicator& c) { return c.localRank(); });
}

HOOP_API hoopResult_t hoopCommLocalCount(const hoopComm_t comm, int* localCount) {
  return query(comm, localCount, "hoopCommLocalCount",
               [](const Communicator& c) { return c.localSize(); });
}

HOOP_API hoopResult_t hoopCommCrossRank(const hoopComm_t comm, int* crossRank) {
  return query(comm, crossRank, "hoopCommCrossRank",
               [](const Communicator& c) { return c.crossRank(); });
}

HOOP_API hoopResult_t hoopCommCrossCount(const hoopComm_t comm, int* crossCount) {
  return query(comm, crossCount, "hoopCommCrossCount",
               [](const Communicator& c) { return c.crossSize(); });
}

HOOP_API hoopResult_t hoopCommGetAsyncError(hoopComm_t comm, hoopResult_t* asyncError) {
  return guarded(nullptr, [&] {
    checkedComm(comm, "hoopCommGetAsyncError");
    if (asyncError == nullptr) fail(hoopInvalidArgument, "hoopCommGetAsyncError: NULL out");
    if (comm->queue != nullptr) {
      // Its operations hold the operation lock for as long as they run: ask the queue instead.
      std::string message;
      *asyncError = comm->queue->status(&message);
      if (*asyncError != hoopSuccess && *asyncError != hoopInProgress) {
        std::lock_guard lock(comm->errorMutex);
        comm->lastError = message;
      }
      return;
    }
    std::lock_guard lock(comm->impl->operationMutex());
    // Another rank's failure notice fails a communicator that is between operations too.
    if (comm->failure == hoopSuccess) {
      std::optional<Error> noticed = comm->impl->deviceFailure();
      if (!noticed) noticed = comm->impl->failureNoticed();
      if (noticed) {
        comm->failure = noticed->code();
        comm->failureMessage = noticed->what();
        std::lock_guard errorLock(comm->errorMutex);
        comm->lastError = comm->failureMessage;
      }
    }
    *asyncError = comm->failure;
  });
}

HOOP_API const char* hoopGetErrorString(hoopResult_t result) {
  switch (result) {
    case hoopSuccess: return "no error";
    case hoopUnhandledCudaError: return "unhandled cuda error";
    case hoopSystemError: return "unhandled system error (network, memory, file descriptors)";
    case hoopInternalError: return "internal error: a bug in hoop";
    case hoopInvalidArgument: return "invalid argument";
    case hoopInvalidUsage: return "invalid usage";
    case hoopRemoteError: return "remote process exited or a network error occurred";
    case hoopInProgress: return "operation in progress";
    case hoopTimeout: return "operation timed out";
    default: return "unknown result code";
  }
}

HOOP_API const char* hoopGetLastError(hoopComm_t comm) {
  if (comm != nullptr && isLive(comm)) {
    std::lock_guard lock(comm->errorMutex);
    threadLastError() = comm->lastError;
  }
  return threadLastError().c_str();
}
