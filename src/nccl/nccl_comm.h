// The NCCL library's handle and error model, shared by the nccl_*.cc files: what an ncclComm_t
// points to, which handles are live, how hoop's results become ncclResult_t, and the messages
// ncclGetLastError returns. The library is a client of hoop's public C API alone (libhoop.so):
// every collective, group and error below it is hoop's own.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/error.h"
#include "hoop/hoop.h"
#include "nccl.h"

// Exported under NCCL's name; HOOP_NCCL_SECOND_NAME adds the pnccl name NCCL's profilers call.
#define HOOP_NCCL_API extern "C" __attribute__((visibility("default")))
#define HOOP_NCCL_SECOND_NAME(name) \
  extern "C"                        \
      __attribute__((alias("nccl" #name), visibility("default"))) decltype(nccl##name) pnccl##name

// A buffer handed out by ncclCommRegister or ncclCommWindowRegister; the record lets
// deregistration check what it is given. A registration also holds hoop's own (hoopCommRegister:
// the zero-copy path between registered buffers over RDMA); windows need nothing of hoop.
struct ncclWindow_vidmem {
  void* buffer;
  size_t size;
  void* hoopHandle = nullptr;  // null for windows and for empty buffers
};

struct ncclComm {
  // Null until a creation deferred by a group ran at ncclGroupEnd (or when it failed).
  hoopComm_t hoop = nullptr;
  // Why `hoop` is null once the group ended without making it.
  std::string notCreated;
  // ncclCommCuDevice's answer: the CUDA device current when the communicator was asked for; -1
  // in a process without CUDA.
  int device = -1;
  // config->commName, for messages.
  std::string name;
  // What the communicator was made with; ncclCommSplit and ncclCommShrink pass it on when their
  // config is NULL. `algorithms` is always unset here.
  hoopConfig_t settings = HOOP_CONFIG_INITIALIZER;

  std::mutex mutex;  // guards the fields below
  std::string lastError;
  std::set<ncclWindow_vidmem*> registrations;
  std::set<ncclWindow_vidmem*> windows;
};

namespace hoop::nccl {

// hoop's result as NCCL's: the same numbers, except hoopTimeout, which NCCL does not have: a peer
// that did not take part in time is ncclRemoteError (the message says it timed out).
ncclResult_t toNccl(hoopResult_t result);

// Live handles, so a destroyed or made-up handle is a clear error instead of a crash.
void publish(ncclComm* comm);
bool isLive(ncclComm* comm);
// Takes comm out of the live set; fails naming `call` when it is not live.
void withdraw(ncclComm* comm, const char* call);

// comm when it is live; fails naming `call` when it is NULL or not live.
ncclComm* liveComm(ncclComm_t comm, const char* call);
// comm when it is live and its hoop communicator exists (a creation deferred by a group has run).
ncclComm* usableComm(ncclComm_t comm, const char* call);

// Remembers `message` as this thread's and (for a live comm) comm's last error; returns `code`.
ncclResult_t record(ncclComm* comm, ncclResult_t code, const std::string& message);
// The text ncclGetLastError(NULL) returns on this thread.
std::string& threadLastError();

// The result of a hoop call made for NCCL's `call`: hoopSuccess and hoopInProgress pass through;
// a failure becomes an Error whose message names `call` and carries hoop's own message.
ncclResult_t passOn(hoopResult_t result, const char* call);
// The same message as passOn's for a failed hoop call, without throwing.
std::string hoopFailure(const char* call);

// Runs body; a thrown hoop::Error becomes its ncclResult_t and message (recorded for comm).
template <typename Body>
ncclResult_t guarded(ncclComm* comm, Body&& body) {
  try {
    return body();
  } catch (const Error& e) {
    return record(comm, toNccl(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return record(comm, ncclSystemError, "out of memory");
  } catch (const std::exception& e) {
    return record(comm, ncclInternalError,
                  str("internal error in hoop's NCCL library: ", e.what()));
  }
}

// NCCL's datatypes as hoop's (the same numbers up to bf16). fp8 has no hoop type: a call that
// only moves data takes it as bytes, one that reduces is refused naming the type.
const char* typeName(ncclDataType_t type);
size_t typeSize(ncclDataType_t type);  // fails for a value that is no ncclDataType_t
bool isFp8(ncclDataType_t type);
hoopDataType_t movedType(ncclDataType_t type, const char* call);
hoopDataType_t reducedType(ncclDataType_t type, const char* call);

}  // namespace hoop::nccl
