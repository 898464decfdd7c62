// The C API's life cycle of a communicator: the version, unique ids, the three ways to create
// one (blocking, non-blocking, from a launcher's environment), and finalizing, destroying or
// aborting it. hoopCommSplit, the fourth way, is in c_api_split.cc.
#include "api/c_api_init.h"

#include <cstring>
#include <functional>
#include <memory>

#include "api/c_api_redop.h"
#include "api/c_api_submit.h"
#include "base/logging.h"
#include "base/timeline.h"
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

namespace hoop::capi {
namespace {

// The background half of a non-blocking communicator's creation, on its queue's thread.
void initialiseInBackground(hoopComm* comm, const MakeCommunicator& make) {
  auto announce = [comm](Communicator* constructing) {
    std::lock_guard lock(comm->initMutex);
    comm->constructing = constructing;
    if (constructing != nullptr && comm->aborting) constructing->requestAbort();
  };
  std::unique_ptr<Communicator> impl;
  try {
    impl = make(*comm, announce);
  } catch (const Error& e) {
    record(comm, e.code(), e.what());
    throw;
  }
  timelineFromEnvironment(impl->rank());
  std::lock_guard lock(comm->initMutex);
  comm->impl = std::move(impl);
  // An abort that came between create() withdrawing the announcement and now.
  if (comm->aborting) comm->impl->requestAbort();
  comm->ready.store(true, std::memory_order_release);
}

}  // namespace

hoopResult_t initBlocking(hoopComm_t* out, int rank, const CommSettings& settings,
                          const MakeCommunicator& make) {
  return guarded(nullptr, [&] {
    auto comm = std::make_unique<hoopComm>();
    comm->rank = rank;
    comm->settings = settings;
    comm->impl = make(*comm, nullptr);
    timelineFromEnvironment(comm->impl->rank());
    publish(std::move(comm), out);
  });
}

hoopResult_t initNonBlocking(hoopComm_t* out, int rank, const CommSettings& settings,
                             MakeCommunicator make) {
  hoopResult_t status = guarded(nullptr, [&] {
    auto comm = std::make_unique<hoopComm>();
    comm->rank = rank;
    comm->settings = settings;
    comm->queue = std::make_unique<AsyncQueue>();
    hoopComm* raw = comm.get();
    comm->queue->push([raw, make = std::move(make)] { initialiseInBackground(raw, make); }, "");
    publish(std::move(comm), out);
  });
  return status == hoopSuccess ? hoopInProgress : status;
}

}  // namespace hoop::capi

namespace {

void checkInitArguments(hoopComm_t* out, int nranks, int rank) {
  if (out == nullptr) fail(hoopInvalidArgument, "hoopCommInit: comm is NULL");
  *out = nullptr;
  if (nranks < 1) fail(hoopInvalidArgument, "hoopCommInitRank: nranks ", nranks, " < 1");
  if (rank < 0 || rank >= nranks) {
    fail(hoopInvalidArgument, "hoopCommInitRank: rank ", rank, " is not in [0, ", nranks, ")");
  }
}

// hoopCommInitRank and hoopCommInitRankConfig: the arguments checked, then made as `settings` say.
hoopResult_t initRank(hoopComm_t* out, int nranks, hoopUniqueId commId, int rank,
                      const CommSettings& settings) {
  BootstrapId id;
  hoopResult_t status = guarded(nullptr, [&] {
    checkInitArguments(out, nranks, rank);
    id = BootstrapId::decode(commId);
  });
  if (status != hoopSuccess) return status;
  MakeCommunicator make = [id, nranks, rank](hoopComm& comm,
                                             const std::function<void(Communicator*)>& announce) {
    return Communicator::create(id, nranks, rank, nullptr, comm.settings.config, announce);
  };
  if (!settings.blocking) return initNonBlocking(out, rank, settings, std::move(make));
  return initBlocking(out, rank, settings, make);
}

}  // namespace

HOOP_API hoopResult_t hoopCommInitRank(hoopComm_t* comm, int nranks, hoopUniqueId commId,
                                       int rank) {
  return hoopCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

HOOP_API hoopResult_t hoopCommInitRankConfig(hoopComm_t* comm, int nranks, hoopUniqueId commId,
                                             int rank, hoopConfig_t* config) {
  CommSettings settings;
  hoopResult_t status = guarded(nullptr, [&] {
    if (comm != nullptr) *comm = nullptr;
    settings = resolveSettings(config);
  });
  if (status != hoopSuccess) return status;
  return initRank(comm, nranks, commId, rank, settings);
}

HOOP_API hoopResult_t hoopCommInitFromEnv(hoopComm_t* comm) {
  LaunchEnv env;
  CommSettings settings;
  hoopResult_t status = guarded(nullptr, [&] {
    env = readLaunchEnv();
    checkInitArguments(comm, env.size, env.rank);
    settings.config = Config::fromEnvironment();
  });
  if (status != hoopSuccess) return status;
  return initBlocking(comm, env.rank, settings, [&](hoopComm& made, const auto&) {
    // Rank 0's root service; under PMIx this is also where every rank learns the root.
    std::unique_ptr<RootService> root = startLaunchRoot(env, made.settings.config.initTimeout);
    auto created =
        Communicator::create(env.id, env.size, env.rank, std::move(root), made.settings.config);
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

HOOP_API hoopResult_t hoopCommFinalize(hoopComm_t comm) {
  constexpr const char* kCall = "hoopCommFinalize";
  hoopResult_t status = guarded(comm, [&] {
    checkedComm(comm, kCall);
    if (comm->finalized.exchange(true, std::memory_order_acq_rel)) {
      fail(hoopInvalidUsage, kCall, ": rank ", comm->rank.load(),
           ": the communicator was finalized already");
    }
  });
  if (status != hoopSuccess) return status;
  // Behind everything issued before it: the queue runs it last, and the device work it waits for
  // was enqueued by then.
  auto finish = [comm] { runOn(comm, [](Communicator& c) { c.finishDeviceWork(); }); };
  if (comm->queue != nullptr) return enqueue(comm, finish);
  return guarded(comm, finish);
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
  forgetOps(comm);
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
