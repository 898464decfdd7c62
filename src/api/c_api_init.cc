// The C API's life cycle of a communicator: the version, unique ids, the three ways to create
// one (blocking, non-blocking, from a launcher's environment), and destroying or aborting it.
#include <cstring>
#include <functional>
#include <memory>

#include "api/c_api_handle.h"
#include "base/logging.h"
#include "core/launch_env.h"
#include "core/user_config.h"
#include "transport/tcp/interfaces.h"

using namespace hoop;
using namespace hoop::capi;

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
  hoopResult_t status = guarded(nullptr, [&] { withdraw(comm, call); });
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
