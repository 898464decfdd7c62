// The C boundary's handle and error model, shared by the c_api_*.cc files: what a hoopComm_t
// points to, which handles are live, and how a hoop::Error becomes a hoopResult_t and the message
// hoopGetLastError returns. Nothing here moves data.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "base/error.h"
#include "core/async_queue.h"
#include "core/communicator.h"
#include "core/user_config.h"
#include "hoop/hoop.h"

#define HOOP_API extern "C" __attribute__((visibility("default")))

struct hoopComm {
  std::unique_ptr<hoop::Communicator> impl;
  // Known from the init call, before impl exists; for a communicator split from a non-blocking
  // one, once the parent's queue has run the split's exchange (-1 until then).
  std::atomic<int> rank{-1};
  // The settings it was made with (blocking is also `queue` being set): what a communicator split
  // from it inherits.
  hoop::CommSettings settings;
  // hoopCommFinalize was called: operations are refused from then on.
  std::atomic<bool> finalized{false};
  std::mutex errorMutex;
  std::string lastError;
  // The first failure inside an operation; the communicator is unusable after it.
  hoopResult_t failure = hoopSuccess;
  std::string failureMessage;
  // hoopCommProbeLink calls made with each peer, so each call's pattern differs from the one
  // before (a stale buffer cannot pass for a fresh one). Touched under the operation lock.
  std::map<int, uint64_t> probesWithPeer;

  // Non-blocking communicators only (hoopConfig_t.blocking = 0); a blocking one never looks
  // further than `queue` being null.
  std::unique_ptr<hoop::AsyncQueue> queue;
  // Set (release) once the queue's thread has put impl in place: until then other threads must
  // not touch impl.
  std::atomic<bool> ready{false};
  // While the background initialisation runs: the communicator being built (so hoopCommAbort
  // can stop it), and whether an abort came first.
  std::mutex initMutex;
  hoop::Communicator* constructing = nullptr;
  bool aborting = false;
};

namespace hoop::capi {

// Live handles, so a destroyed or made-up handle is an error message instead of a crash.
bool isLive(hoopComm* comm);
// Makes `comm` live and hands it to the caller through `out`.
void publish(std::unique_ptr<hoopComm> comm, hoopComm_t* out);
// Takes `comm` out of the live set (after checking it is live, for `call`'s message).
void withdraw(hoopComm* comm, const char* call);

// `comm`, when it is a live handle; else fails naming `call`.
hoopComm* checkedComm(hoopComm* comm, const char* call);
// A non-blocking communicator whose initialisation has not finished (or failed) cannot take
// operations yet: they need its size and connections.
void checkInitialised(hoopComm* comm, const char* call);
// After hoopCommFinalize only destroy, abort and queries are served: anything else fails here.
void checkNotFinalized(hoopComm* comm, const char* call);
// A communicator that can take an operation now: live, initialised and not finalized.
hoopComm* usableComm(hoopComm* comm, const char* call);

// Remembers `message` as this thread's and (for a live `comm`) the communicator's last error,
// logs it, and returns `code`.
hoopResult_t record(hoopComm* comm, hoopResult_t code, const std::string& message);
// The message hoopGetLastError(NULL) returns on this thread.
std::string& threadLastError();

// Runs body, mapping exceptions to result codes and messages.
template <typename Body>
hoopResult_t guarded(hoopComm* comm, Body&& body) {
  try {
    body();
    return hoopSuccess;
  } catch (const Error& e) {
    return record(comm, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return record(comm, hoopSystemError, "out of memory");
  } catch (const std::exception& e) {
    return record(comm, hoopInternalError, str("internal error: ", e.what()));
  }
}

}  // namespace hoop::capi
