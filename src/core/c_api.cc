// The C boundary: validates arguments, turns hoop::Error into hoopResult_t, remembers messages
// for hoopGetLastError, and implements groups. Nothing here moves data.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/registry.h"
#include "core/async_queue.h"
#include "core/communicator.h"
#include "core/launch_env.h"
#include "core/logging.h"
#include "core/user_config.h"
#include "device/cuda/memory_kind.h"
#include "hoop/hoop.h"
#include "transport/tcp/interfaces.h"

#define HOOP_API extern "C" __attribute__((visibility("default")))

using namespace hoop;

struct hoopComm {
  std::unique_ptr<Communicator> impl;
  int rank = -1;  // known from the init call, before impl exists
  std::mutex errorMutex;
  std::string lastError;
  // The first failure inside an operation; the communicator is unusable after it.
  hoopResult_t failure = hoopSuccess;
  std::string failureMessage;

  // Non-blocking communicators only (hoopConfig_t.blocking = 0); a blocking one never looks
  // further than `queue` being null.
  std::unique_ptr<AsyncQueue> queue;
  // Set (release) once the queue's thread has put impl in place: until then other threads must
  // not touch impl.
  std::atomic<bool> ready{false};
  // While the background initialisation runs: the communicator being built (so hoopCommAbort
  // can stop it), and whether an abort came first.
  std::mutex initMutex;
  Communicator* constructing = nullptr;
  bool aborting = false;
};

namespace {

thread_local std::string threadLastError;

// Live handles, so a destroyed or made-up handle is an error message instead of a crash.
struct HandleRegistry {
  std::mutex mutex;
  std::unordered_set<hoopComm*> live;
};
HandleRegistry& handles() {
  static HandleRegistry registry;
  return registry;
}

bool isLive(hoopComm* comm) {
  std::lock_guard lock(handles().mutex);
  return handles().live.count(comm) != 0;
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

// A non-blocking communicator whose initialisation has not finished (or failed) cannot take
// operations yet: they need its size and connections.
void checkInitialised(hoopComm* comm, const char* call) {
  if (comm->queue == nullptr || comm->ready.load(std::memory_order_acquire)) return;
  std::string message;
  const hoopResult_t status = comm->queue->status(&message);
  if (status != hoopInProgress && status != hoopSuccess) {
    fail(status, call, ": rank ", comm->rank, ": the communicator failed to initialise: ", message);
  }
  fail(hoopInvalidUsage, call, ": rank ", comm->rank,
       ": the non-blocking communicator is still initialising; poll hoopCommGetAsyncError "
       "until it returns hoopSuccess before using it");
}

// A communicator that can take an operation now.
hoopComm* usableComm(hoopComm* comm, const char* call) {
  checkedComm(comm, call);
  checkInitialised(comm, call);
  return comm;
}

hoopResult_t record(hoopComm* comm, hoopResult_t code, const std::string& message) {
  threadLastError = message;
  if (comm != nullptr && isLive(comm)) {
    std::lock_guard lock(comm->errorMutex);
    comm->lastError = message;
  }
  log(LogLevel::kWarn, LogSubsys::kInit, comm != nullptr && isLive(comm) ? comm->rank : -1,
      message);
  return code;
}

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

void checkType(hoopDataType_t type, const char* call) {
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= hoopNumTypes) {
    fail(hoopInvalidArgument, call, ": invalid datatype ", static_cast<int>(type));
  }
}

void checkOp(hoopRedOp_t op, const char* call) {
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= hoopNumOps) {
    fail(hoopInvalidArgument, call, ": invalid reduction op ", static_cast<int>(op));
  }
}

void checkBuffer(const void* buffer, size_t count, size_t elementSize, size_t multiplier,
                 const char* name, const char* call) {
  if (count > SIZE_MAX / elementSize / multiplier) {
    fail(hoopInvalidArgument, call, ": count ", count, " overflows the byte size");
  }
  if (buffer == nullptr && count > 0) fail(hoopInvalidArgument, call, ": ", name, " is NULL");
  // The collectives read buffers with the CPU: a device pointer would crash the process.
  if (count > 0 && memoryKindOf(buffer) == MemoryKind::kDevice) {
    fail(hoopInvalidUsage, call, ": ", name, " ", buffer,
         " is CUDA device memory, and collectives on device buffers are not supported yet by "
         "this build path; pass host (or managed) memory");
  }
}

// A root or peer argument must name a rank of the communicator.
void checkRank(hoopComm* comm, int rank, const char* what, const char* call) {
  if (rank < 0 || rank >= comm->impl->size()) {
    fail(hoopInvalidArgument, call, ": ", what, " ", rank, " is not a rank of this communicator (",
         comm->impl->size(), " ranks)");
  }
}

void checkStream(hoopStream_t stream, const char* call) {
  if (stream != nullptr) {
    fail(hoopInvalidUsage, call,
         ": a stream was given, but this hoop has no CUDA support; pass "
         "NULL for host memory");
  }
}

// An operation deferred to hoopGroupEnd.
struct Deferred {
  hoopComm* comm;
  enum class Kind { kCollective, kP2p, kBarrier } kind;
  CollectiveArgs collective;
  P2pOp p2p;
};

struct GroupState {
  int depth = 0;
  std::vector<Deferred> ops;
};
thread_local GroupState group;

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

void execute(const Deferred& op) {
  switch (op.kind) {
    case Deferred::Kind::kCollective:
      runOn(op.comm, [&](Communicator& c) { runCollective(c, op.collective); });
      break;
    case Deferred::Kind::kBarrier: runOn(op.comm, [&](Communicator& c) { runBarrier(c); }); break;
    case Deferred::Kind::kP2p:
      runOn(op.comm, [&](Communicator& c) { runP2pGroup(c, {op.p2p}); });
      break;
  }
}

// Runs comm's share of a group's operations: collectives in call order, then all point-to-point
// operations together (so matching sends and receives progress at the same time).
void executeGroup(hoopComm* comm, const std::vector<Deferred>& ops) {
  std::vector<P2pOp> p2p;
  for (const Deferred& op : ops) {
    if (op.comm != comm) continue;
    if (op.kind == Deferred::Kind::kP2p)
      p2p.push_back(op.p2p);
    else
      execute(op);
  }
  if (!p2p.empty()) runOn(comm, [&](Communicator& c) { runP2pGroup(c, p2p); });
}

// Hands work to a non-blocking communicator's thread; a failure there is logged and kept for
// hoopCommGetAsyncError, and its message becomes hoopGetLastError(comm)'s.
hoopResult_t enqueue(hoopComm* comm, std::function<void()> work) {
  hoopResult_t status = guarded(comm, [&] {
    comm->queue->push(
        [comm, work = std::move(work)] {
          try {
            work();
          } catch (const Error& e) {
            record(comm, e.code(), e.what());
            throw;
          }
        },
        str("rank ", comm->rank,
            ": the communicator failed earlier and cannot be used (destroy "
            "or abort it): "));
  });
  return status == hoopSuccess ? hoopInProgress : status;
}

// Defers inside a group; outside one, runs at once (blocking) or queues (non-blocking).
hoopResult_t submit(hoopComm* comm, Deferred op) {
  if (group.depth > 0) {
    group.ops.push_back(std::move(op));
    return hoopSuccess;
  }
  if (comm->queue != nullptr) return enqueue(comm, [op] { execute(op); });
  return guarded(comm, [&] { execute(op); });
}

hoopResult_t submitCollective(hoopComm* comm, const CollectiveArgs& args) {
  return submit(comm, {comm, Deferred::Kind::kCollective, args, {}});
}

}  // namespace

HOOP_API hoopResult_t hoopGetVersion(int* version) {
  if (version == nullptr) return record(nullptr, hoopInvalidArgument, "hoopGetVersion: NULL");
  *version = HOOP_VERSION_CODE;
  return hoopSuccess;
}

HOOP_API hoopResult_t hoopGetUniqueId(hoopUniqueId* uniqueId) {
  return guarded(nullptr, [&] {
    if (uniqueId == nullptr) fail(hoopInvalidArgument, "hoopGetUniqueId: uniqueId is NULL");
    BootstrapId id;
    id.secret = Secret::random();
    Secret tag = Secret::random();
    std::memcpy(&id.jobTag, tag.bytes.data(), sizeof(id.jobTag));
    SocketAddress address = chooseListenAddress(nullptr);
    address.setPort(0);
    auto root = std::make_unique<RootService>(address, id, Config::fromEnvironment().initTimeout);
    id.root = root->address();
    adoptRootService(std::move(root));
    *uniqueId = id.encode();
  });
}

namespace {

void checkInitArguments(hoopComm_t* out, int nranks, int rank) {
  if (out == nullptr) fail(hoopInvalidArgument, "hoopCommInit: comm is NULL");
  *out = nullptr;
  if (nranks < 1) fail(hoopInvalidArgument, "hoopCommInitRank: nranks ", nranks, " < 1");
  if (rank < 0 || rank >= nranks) {
    fail(hoopInvalidArgument, "hoopCommInitRank: rank ", rank, " is not in [0, ", nranks, ")");
  }
}

void publish(std::unique_ptr<hoopComm> comm, hoopComm_t* out) {
  std::lock_guard lock(handles().mutex);
  handles().live.insert(comm.get());
  *out = comm.release();
}

hoopResult_t initComm(hoopComm_t* out, int nranks, int rank,
                      const std::function<std::unique_ptr<Communicator>()>& create) {
  return guarded(nullptr, [&] {
    checkInitArguments(out, nranks, rank);
    auto comm = std::make_unique<hoopComm>();
    comm->rank = rank;
    comm->impl = create();
    publish(std::move(comm), out);
  });
}

// The background half of a non-blocking hoopCommInitRankConfig, on the communicator's thread.
void initialiseInBackground(hoopComm* comm, const BootstrapId& id, int nranks,
                            const Config& config) {
  auto announce = [comm](Communicator* constructing) {
    std::lock_guard lock(comm->initMutex);
    comm->constructing = constructing;
    if (constructing != nullptr && comm->aborting) constructing->requestAbort();
  };
  std::unique_ptr<Communicator> impl;
  try {
    impl = Communicator::create(id, nranks, comm->rank, nullptr, config, announce);
  } catch (const Error& e) {
    record(comm, e.code(), e.what());
    throw;
  }
  std::lock_guard lock(comm->initMutex);
  comm->impl = std::move(impl);
  // An abort that came between create() withdrawing the announcement and now.
  if (comm->aborting) comm->impl->requestAbort();
  comm->ready.store(true, std::memory_order_release);
}

// Returns at once with a handle whose initialisation runs on its own thread.
hoopResult_t initNonBlocking(hoopComm_t* out, int nranks, int rank, const hoopUniqueId& commId,
                             const Config& config) {
  hoopResult_t status = guarded(nullptr, [&] {
    checkInitArguments(out, nranks, rank);
    const BootstrapId id = BootstrapId::decode(commId);
    auto comm = std::make_unique<hoopComm>();
    comm->rank = rank;
    comm->queue = std::make_unique<AsyncQueue>();
    hoopComm* raw = comm.get();
    comm->queue->push(
        [raw, id, nranks, config] { initialiseInBackground(raw, id, nranks, config); }, "");
    publish(std::move(comm), out);
  });
  return status == hoopSuccess ? hoopInProgress : status;
}

}  // namespace

HOOP_API hoopResult_t hoopCommInitRank(hoopComm_t* comm, int nranks, hoopUniqueId commId,
                                       int rank) {
  return initComm(comm, nranks, rank, [&] {
    return Communicator::create(BootstrapId::decode(commId), nranks, rank, nullptr);
  });
}

HOOP_API hoopResult_t hoopCommInitRankConfig(hoopComm_t* comm, int nranks, hoopUniqueId commId,
                                             int rank, hoopConfig_t* config) {
  CommSettings settings;
  hoopResult_t status = guarded(nullptr, [&] {
    if (comm != nullptr) *comm = nullptr;
    settings = resolveSettings(config);
  });
  if (status != hoopSuccess) return status;
  if (!settings.blocking) return initNonBlocking(comm, nranks, rank, commId, settings.config);
  return initComm(comm, nranks, rank, [&] {
    return Communicator::create(BootstrapId::decode(commId), nranks, rank, nullptr,
                                settings.config);
  });
}

HOOP_API hoopResult_t hoopCommInitFromEnv(hoopComm_t* comm) {
  LaunchEnv env;
  hoopResult_t status = guarded(nullptr, [&] { env = readLaunchEnv(); });
  if (status != hoopSuccess) return status;
  return initComm(comm, env.size, env.rank, [&] {
    std::unique_ptr<RootService> root;
    if (env.rank == 0) {
      root =
          std::make_unique<RootService>(env.id.root, env.id, Config::fromEnvironment().initTimeout);
    }
    auto created = Communicator::create(env.id, env.size, env.rank, std::move(root));
    if (env.launcherLocalRank >= 0 && env.launcherLocalRank != created->localRank()) {
      // Both can be right (a launcher may count slots, not processes), but a difference often
      // means hosts that report the same name, or containers that hide each other.
      log(LogLevel::kWarn, LogSubsys::kInit, env.rank, env.launcher, " says local rank ",
          env.launcherLocalRank, " but hoop counts ", created->localRank(), " of ",
          created->localSize(), " ranks on host ", localHostName(),
          " (local ranks are counted by hostname and boot id; HOOP_HOSTNAME overrides)");
    }
    return created;
  });
}

namespace {

// Removes comm from the live set and frees it once no operation holds it.
hoopResult_t release(hoopComm_t comm, const char* call, bool abort) {
  hoopResult_t status = guarded(nullptr, [&] {
    checkedComm(comm, call);
    std::lock_guard lock(handles().mutex);
    handles().live.erase(comm);
  });
  if (status != hoopSuccess) return status;
  if (comm->queue != nullptr) {
    if (abort) {
      std::lock_guard lock(comm->initMutex);
      comm->aborting = true;
      if (comm->constructing != nullptr) comm->constructing->requestAbort();
      if (comm->impl != nullptr) comm->impl->requestAbort();
      // Later, unlocked: the queue's thread takes initMutex when initialisation ends.
    }
    // The queue's thread is the only one that runs operations on a non-blocking communicator.
    if (abort) {
      comm->queue->stop();
    } else {
      comm->queue->finish();
    }
  } else {
    if (abort) comm->impl->requestAbort();
    { std::lock_guard waitForOperation(comm->impl->operationMutex()); }
  }
  delete comm;
  return hoopSuccess;
}

}  // namespace

HOOP_API hoopResult_t hoopCommDestroy(hoopComm_t comm) {
  return release(comm, "hoopCommDestroy", false);
}

HOOP_API hoopResult_t hoopCommAbort(hoopComm_t comm) {
  return release(comm, "hoopCommAbort", true);
}

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
      if (std::optional<Error> noticed = comm->impl->failureNoticed()) {
        comm->failure = noticed->code();
        comm->failureMessage = noticed->what();
        std::lock_guard errorLock(comm->errorMutex);
        comm->lastError = comm->failureMessage;
      }
    }
    *asyncError = comm->failure;
  });
}

namespace {

// The call hoopCommScheduleName and hoopCommScheduleSettled ask about, checked.
CollectiveArgs askedCall(hoopComm_t comm, hoopCollective_t collective, size_t count,
                         hoopDataType_t datatype, const void* answer, const char* answerName,
                         const char* function) {
  usableComm(comm, function);
  checkType(datatype, function);
  if (answer == nullptr) fail(hoopInvalidArgument, function, ": ", answerName, " is NULL");
  const auto kind = static_cast<OpKind>(collective);
  switch (kind) {
    case OpKind::kAllReduce:
    case OpKind::kBroadcast:
    case OpKind::kReduce:
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllToAll: break;
    default:
      fail(hoopInvalidArgument, function, ": ", static_cast<int>(collective),
           " is not a hoopCollective_t");
  }
  CollectiveArgs args;
  args.kind = kind;
  args.count = count;
  args.type = static_cast<DataType>(datatype);
  return args;
}

}  // namespace

HOOP_API hoopResult_t hoopCommScheduleName(hoopComm_t comm, hoopCollective_t collective,
                                           size_t count, hoopDataType_t datatype,
                                           const char** name) {
  return guarded(nullptr, [&] {
    const CollectiveArgs args =
        askedCall(comm, collective, count, datatype, name, "name", "hoopCommScheduleName");
    // A call in flight (non-blocking communicators) may be settling the choice.
    std::lock_guard lock(comm->impl->operationMutex());
    // Literals in the registry: a static C string.
    *name = chooseSchedule(*comm->impl, args).schedule->name.data();
  });
}

HOOP_API hoopResult_t hoopCommScheduleSettled(hoopComm_t comm, hoopCollective_t collective,
                                              size_t count, hoopDataType_t datatype, int* settled) {
  return guarded(nullptr, [&] {
    const CollectiveArgs args =
        askedCall(comm, collective, count, datatype, settled, "settled", "hoopCommScheduleSettled");
    std::lock_guard lock(comm->impl->operationMutex());
    *settled = scheduleSettled(*comm->impl, args) ? 1 : 0;
  });
}

HOOP_API hoopResult_t hoopCommSetAlgorithms(hoopComm_t comm, const char* algorithms) {
  constexpr const char* kCall = "hoopCommSetAlgorithms";
  // Read before any rank waits on another: a text no rank can read fails on every rank at once,
  // leaving the communicator as it was.
  AlgoOverrides rules;
  const hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, kCall);
    if (group.depth > 0) {
      fail(hoopInvalidUsage, kCall,
           ": not inside hoopGroupStart/hoopGroupEnd, whose calls run after the group ends");
    }
    if (algorithms == nullptr) return;
    try {
      rules = AlgoOverrides::parse(algorithms);
    } catch (const Error& e) {
      fail(e.code(), kCall, ": ", e.what());
    }
  });
  if (status != hoopSuccess) return status;
  auto adopt = [comm, rules = std::move(rules)]() mutable {
    runOn(comm, [&](Communicator& c) { setAlgorithms(c, std::move(rules)); });
  };
  if (comm->queue != nullptr) return enqueue(comm, std::move(adopt));
  return guarded(comm, adopt);
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
    threadLastError = comm->lastError;
  }
  return threadLastError.c_str();
}

namespace {

// One collective call as the C API receives it, and what its arguments must satisfy.
struct CollectiveCall {
  const char* name;
  OpKind kind;
  const void* send;
  void* recv;
  size_t count;
  hoopDataType_t datatype;
  std::optional<hoopRedOp_t> op;  // reducing collectives
  std::optional<int> root;        // rooted collectives
  bool sendPerRank = false;       // the buffer holds count elements per rank
  bool recvPerRank = false;
  bool sendOnRootOnly = false;  // only the root reads it
  bool recvOnRootOnly = false;  // only the root writes it
};

// Checks the arguments (leaving the communicator usable when they are wrong) and submits.
hoopResult_t submitChecked(hoopComm* comm, hoopStream_t stream, const CollectiveCall& call) {
  CollectiveArgs args;
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, call.name);
    checkType(call.datatype, call.name);
    if (call.op) checkOp(*call.op, call.name);
    checkStream(stream, call.name);
    if (call.root) checkRank(comm, *call.root, "root", call.name);
    const size_t elementSize = dataTypeSize(static_cast<DataType>(call.datatype));
    const size_t ranks = static_cast<size_t>(comm->impl->size());
    const bool isRoot = call.root && comm->impl->rank() == *call.root;
    if (!call.sendOnRootOnly || isRoot) {
      checkBuffer(call.send, call.count, elementSize, call.sendPerRank ? ranks : 1, "sendbuff",
                  call.name);
    }
    if (!call.recvOnRootOnly || isRoot) {
      checkBuffer(call.recv, call.count, elementSize, call.recvPerRank ? ranks : 1, "recvbuff",
                  call.name);
    }
    args = {call.kind,
            call.send,
            call.recv,
            call.count,
            static_cast<DataType>(call.datatype),
            static_cast<RedOp>(call.op.value_or(hoopSum)),
            call.root.value_or(0),
            0};
  });
  return status != hoopSuccess ? status : submitCollective(comm, args);
}

}  // namespace

HOOP_API hoopResult_t hoopAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                                    hoopStream_t stream) {
  return submitChecked(
      comm, stream,
      {"hoopAllReduce", OpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, std::nullopt});
}

HOOP_API hoopResult_t hoopBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    hoopDataType_t datatype, int root, hoopComm_t comm,
                                    hoopStream_t stream) {
  CollectiveCall call{"hoopBroadcast", OpKind::kBroadcast, sendbuff,     recvbuff,
                      count,           datatype,           std::nullopt, root};
  call.sendOnRootOnly = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 hoopDataType_t datatype, hoopRedOp_t op, int root, hoopComm_t comm,
                                 hoopStream_t stream) {
  CollectiveCall call{"hoopReduce", OpKind::kReduce, sendbuff, recvbuff, count, datatype, op, root};
  call.recvOnRootOnly = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream) {
  CollectiveCall call{"hoopAllGather", OpKind::kAllGather, sendbuff,     recvbuff,
                      sendcount,       datatype,           std::nullopt, std::nullopt};
  call.recvPerRank = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                                        hoopStream_t stream) {
  CollectiveCall call{
      "hoopReduceScatter", OpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
      std::nullopt};
  call.sendPerRank = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                   hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream) {
  CollectiveCall call{"hoopAllToAll", OpKind::kAllToAll, sendbuff,     recvbuff,
                      count,          datatype,          std::nullopt, std::nullopt};
  call.sendPerRank = true;
  call.recvPerRank = true;
  return submitChecked(comm, stream, call);
}

namespace {

hoopResult_t submitP2p(bool isSend, const void* buffer, size_t count, hoopDataType_t datatype,
                       int peer, hoopComm_t comm, hoopStream_t stream) {
  P2pOp op;
  const char* call = isSend ? "hoopSend" : "hoopRecv";
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, call);
    checkType(datatype, call);
    checkStream(stream, call);
    checkRank(comm, peer, "peer", call);
    checkBuffer(buffer, count, dataTypeSize(static_cast<DataType>(datatype)), 1, "buffer", call);
    op = {isSend, peer, const_cast<void*>(buffer), count, static_cast<DataType>(datatype)};
  });
  if (status != hoopSuccess) return status;
  return submit(comm, {comm, Deferred::Kind::kP2p, {}, op});
}

}  // namespace

HOOP_API hoopResult_t hoopSend(const void* sendbuff, size_t count, hoopDataType_t datatype,
                               int peer, hoopComm_t comm, hoopStream_t stream) {
  return submitP2p(true, sendbuff, count, datatype, peer, comm, stream);
}

HOOP_API hoopResult_t hoopRecv(void* recvbuff, size_t count, hoopDataType_t datatype, int peer,
                               hoopComm_t comm, hoopStream_t stream) {
  return submitP2p(false, recvbuff, count, datatype, peer, comm, stream);
}

HOOP_API hoopResult_t hoopBarrier(hoopComm_t comm, hoopStream_t stream) {
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, "hoopBarrier");
    checkStream(stream, "hoopBarrier");
  });
  return status != hoopSuccess ? status : submit(comm, {comm, Deferred::Kind::kBarrier, {}, {}});
}

HOOP_API hoopResult_t hoopGroupStart(void) {
  ++group.depth;
  return hoopSuccess;
}

HOOP_API hoopResult_t hoopGroupEnd(void) {
  if (group.depth == 0) {
    return record(nullptr, hoopInvalidUsage, "hoopGroupEnd without a matching hoopGroupStart");
  }
  if (--group.depth > 0) return hoopSuccess;
  std::vector<Deferred> ops = std::move(group.ops);
  group.ops.clear();
  // Per communicator, in first-use order (see executeGroup).
  std::vector<hoopComm*> comms;
  for (const Deferred& op : ops) {
    if (std::find(comms.begin(), comms.end(), op.comm) == comms.end()) comms.push_back(op.comm);
  }
  hoopResult_t first = hoopSuccess;
  bool queued = false;
  for (hoopComm* comm : comms) {
    hoopResult_t status = guarded(comm, [&] { checkedComm(comm, "hoopGroupEnd"); });
    if (status == hoopSuccess && comm->queue != nullptr) {
      std::vector<Deferred> mine;
      std::copy_if(ops.begin(), ops.end(), std::back_inserter(mine),
                   [&](const Deferred& op) { return op.comm == comm; });
      status = enqueue(comm, [comm, mine] { executeGroup(comm, mine); });
      if (status == hoopInProgress) {
        queued = true;
        status = hoopSuccess;
      }
    } else if (status == hoopSuccess) {
      status = guarded(comm, [&] { executeGroup(comm, ops); });
    }
    if (first == hoopSuccess) first = status;
  }
  return first == hoopSuccess && queued ? hoopInProgress : first;
}
