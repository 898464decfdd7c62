#include "api/c_api_handle.h"

#include <unordered_set>

#include "base/logging.h"

namespace hoop::capi {
namespace {

struct HandleRegistry {
  std::mutex mutex;
  std::unordered_set<hoopComm*> live;
};
HandleRegistry& handles() {
  static HandleRegistry registry;
  return registry;
}

}  // namespace

bool isLive(hoopComm* comm) {
  std::lock_guard lock(handles().mutex);
  return handles().live.count(comm) != 0;
}

void publish(std::unique_ptr<hoopComm> comm, hoopComm_t* out) {
  std::lock_guard lock(handles().mutex);
  handles().live.insert(comm.get());
  *out = comm.release();
}

void withdraw(hoopComm* comm, const char* call) {
  checkedComm(comm, call);
  std::lock_guard lock(handles().mutex);
  handles().live.erase(comm);
}

hoopComm* checkedComm(hoopComm* comm, const char* call) {
  if (comm == nullptr) fail(hoopInvalidArgument, call, ": comm is NULL");
  if (!isLive(comm)) {
    fail(hoopInvalidUsage, call,
         ": comm is not a live communicator (destroyed or aborted "
         "already, or never created)");
  }
  return comm;
}

void checkInitialised(hoopComm* comm, const char* call) {
  if (comm->queue == nullptr || comm->ready.load(std::memory_order_acquire)) return;
  std::string message;
  const hoopResult_t status = comm->queue->status(&message);
  if (status != hoopInProgress && status != hoopSuccess) {
    fail(status, call, ": rank ", comm->rank.load(),
         ": the communicator failed to initialise: ", message);
  }
  fail(hoopInvalidUsage, call, ": rank ", comm->rank.load(),
       ": the non-blocking communicator is still initialising; poll hoopCommGetAsyncError "
       "until it returns hoopSuccess before using it");
}

void checkNotFinalized(hoopComm* comm, const char* call) {
  if (comm->finalized.load(std::memory_order_acquire)) {
    fail(hoopInvalidUsage, call, ": rank ", comm->rank.load(),
         ": the communicator was finalized (hoopCommFinalize); only hoopCommDestroy, "
         "hoopCommAbort and queries may follow");
  }
}

hoopComm* usableComm(hoopComm* comm, const char* call) {
  checkedComm(comm, call);
  checkInitialised(comm, call);
  checkNotFinalized(comm, call);
  return comm;
}

std::string& threadLastError() {
  thread_local std::string message;
  return message;
}

hoopResult_t record(hoopComm* comm, hoopResult_t code, const std::string& message) {
  threadLastError() = message;
  if (comm != nullptr && isLive(comm)) {
    std::lock_guard lock(comm->errorMutex);
    comm->lastError = message;
  }
  log(LogLevel::kWarn, LogSubsys::kInit, comm != nullptr && isLive(comm) ? comm->rank.load() : -1,
      message);
  return code;
}

}  // namespace hoop::capi
