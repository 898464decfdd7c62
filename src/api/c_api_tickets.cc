// The C API's per-operation completion on non-blocking communicators: a ticket per queued piece
// of work and a bounded wait for it, so a caller with many operations in flight (a framework's
// asynchronous work objects) learns when each one ended without waiting for the whole queue.
#include <chrono>
#include <string>

#include "api/c_api_handle.h"

using namespace hoop;
using namespace hoop::capi;

HOOP_API hoopResult_t hoopCommQueueTicket(hoopComm_t comm, uint64_t* ticket) {
  return guarded(nullptr, [&] {
    checkedComm(comm, "hoopCommQueueTicket");
    if (ticket == nullptr) fail(hoopInvalidArgument, "hoopCommQueueTicket: NULL out");
    *ticket = comm->queue != nullptr ? comm->queue->queued() : 0;
  });
}

HOOP_API hoopResult_t hoopCommWaitTicket(hoopComm_t comm, uint64_t ticket, int timeoutMs) {
  hoopResult_t waited = hoopSuccess;
  std::string message;
  hoopResult_t status = guarded(nullptr, [&] {
    checkedComm(comm, "hoopCommWaitTicket");
    // A blocking communicator's calls have ended (and reported) by the time they return.
    if (comm->queue == nullptr) return;
    // A negative limit waits for as long as it takes; a year stands for that.
    const std::chrono::milliseconds limit =
        timeoutMs < 0 ? std::chrono::hours(24 * 365) : std::chrono::milliseconds(timeoutMs);
    waited = comm->queue->waitFor(ticket, limit, &message);
  });
  if (status != hoopSuccess) return status;
  if (waited != hoopSuccess && waited != hoopInProgress) {
    // The calling thread's last error only: another thread may be issuing calls on comm.
    threadLastError() = message;
  }
  return waited;
}
