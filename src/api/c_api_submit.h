// How an operation from the C API reaches its communicator: run at once (blocking), handed to
// the communicator's thread (non-blocking), or deferred to hoopGroupEnd inside a group.
#pragma once

#include <functional>
#include <optional>

#include "algorithms/collective.h"
#include "api/c_api_handle.h"
#include "core/premultiply.h"

namespace hoop::capi {

// An operation as submitted (and, inside a group, kept until hoopGroupEnd).
struct Deferred {
  hoopComm* comm;
  enum class Kind { kCollective, kP2p, kBarrier } kind;
  CollectiveArgs collective;
  P2pOp p2p;
  // A point-to-point operation's memory and stream (a collective's are in `collective`).
  MemoryKind memory = MemoryKind::kHost;
  void* stream = nullptr;
  // A collective with an op of hoopRedOpCreatePreMulSum: its factor (the collective's op is then
  // the sum).
  std::optional<PreMulFactor> premultiply = std::nullopt;
};

// Runs one operation on comm's communicator, holding its operation lock; a failure inside marks
// the communicator failed, since peers may be mid-transfer, and is shared with the other ranks.
template <typename Body>
void runOn(hoopComm* comm, Body&& body) {
  std::lock_guard lock(comm->impl->operationMutex());
  if (comm->failure != hoopSuccess) {
    fail(comm->failure, "rank ", comm->impl->rank(),
         ": the communicator failed earlier and cannot "
         "be used (destroy or abort it): ",
         comm->failureMessage);
  }
  try {
    body(*comm->impl);
  } catch (const Error& e) {
    // Before the error is returned, the other ranks hear of it (communicator.h, shareFailure).
    Error shared = comm->impl->shareFailure(e);
    comm->failure = shared.code();
    comm->failureMessage = shared.what();
    throw shared;
  }
}

// Hands work to a non-blocking communicator's thread; a failure there is logged and kept for
// hoopCommGetAsyncError, and its message becomes hoopGetLastError(comm)'s. hoopInProgress once
// queued.
hoopResult_t enqueue(hoopComm* comm, std::function<void()> work);

// Defers inside a group; outside one, runs at once (blocking) or queues (non-blocking).
hoopResult_t submit(hoopComm* comm, Deferred op);

// Whether this thread is between hoopGroupStart and its hoopGroupEnd.
bool inGroup();

}  // namespace hoop::capi
