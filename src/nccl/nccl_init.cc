// NCCL's communicator life cycle on hoop's: the version, unique ids, the init calls (one rank,
// a process's clique, several ids), finalize, destroy, abort, and the revoke hoop refuses.
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "nccl/nccl_comm.h"
#include "nccl/nccl_config.h"
#include "nccl/nccl_group.h"

using namespace hoop;
using namespace hoop::nccl;

static_assert(sizeof(ncclUniqueId) == sizeof(hoopUniqueId), "unique ids travel as they are");

namespace {

hoopUniqueId toHoop(const ncclUniqueId& id) {
  hoopUniqueId converted;
  std::memcpy(&converted, &id, sizeof(converted));
  return converted;
}

// A new handle for a communicator being made with `settings`, on the device current now (the one
// NCCL binds a communicator to).
std::unique_ptr<ncclComm> newComm(const CommSettings& settings) {
  auto comm = std::make_unique<ncclComm>();
  comm->settings = settings.hoop;
  comm->name = settings.name;
  hoopGetDevice(&comm->device);
  return comm;
}

void checkRankArguments(ncclComm_t* comm, int nranks, int rank, const char* call) {
  if (comm == nullptr) fail(hoopInvalidArgument, call, ": comm is NULL");
  *comm = nullptr;
  if (nranks < 1) fail(hoopInvalidArgument, call, ": nranks ", nranks, " < 1");
  if (rank < 0 || rank >= nranks) {
    fail(hoopInvalidArgument, call, ": rank ", rank, " is not in [0, ", nranks, ")");
  }
}

// Creates the communicator (now, or at ncclGroupEnd in a group) and hands out its handle.
ncclResult_t initRank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank,
                      const ncclConfig_t* config, const char* call) {
  return guarded(nullptr, [&] {
    checkRankArguments(out, nranks, rank, call);
    const CommSettings settings = readConfig(config, call);
    std::unique_ptr<ncclComm> comm = newComm(settings);
    const hoopUniqueId hoopId = toHoop(id);
    ncclComm* raw = comm.get();
    publish(raw);
    const ncclResult_t result =
        createComm(raw, call, [raw, nranks, hoopId, rank](hoopComm_t* made) {
          return hoopCommInitRankConfig(made, nranks, hoopId, rank, &raw->settings);
        });
    if (result != ncclSuccess && result != ncclInProgress) {
      withdraw(raw, call);
      return result;
    }
    *out = comm.release();
    return result;
  });
}

// Frees comm and its hoop communicator (destroyed or aborted).
ncclResult_t release(ncclComm_t comm, const char* call, bool abort) {
  // NCCL takes a NULL communicator as nothing to do.
  if (comm == nullptr) return ncclSuccess;
  return guarded(nullptr, [&] {
    liveComm(comm, call);
    if (comm->hoop == nullptr && comm->notCreated.empty()) {
      fail(hoopInvalidUsage, call,
           ": the communicator is created at the ncclGroupEnd of the group that asked for it; "
           "end the group before destroying it");
    }
    withdraw(comm, call);
    std::unique_ptr<ncclComm> owned(comm);
    for (ncclWindow_vidmem* registration : owned->registrations) delete registration;
    for (ncclWindow_vidmem* window : owned->windows) delete window;
    if (owned->hoop == nullptr) return ncclSuccess;
    return passOn(abort ? hoopCommAbort(owned->hoop) : hoopCommDestroy(owned->hoop), call);
  });
}

}  // namespace

HOOP_NCCL_API ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return record(nullptr, ncclInvalidArgument, "ncclGetVersion: NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

HOOP_NCCL_API ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guarded(nullptr, [&] {
    if (uniqueId == nullptr) fail(hoopInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    hoopUniqueId id;
    passOn(hoopGetUniqueId(&id), "ncclGetUniqueId");
    std::memcpy(uniqueId, &id, sizeof(id));
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                  int rank, ncclConfig_t* config) {
  return initRank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

HOOP_NCCL_API ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                            int rank) {
  return initRank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
}

HOOP_NCCL_API ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                    int nId, ncclUniqueId* commIds,
                                                    ncclConfig_t* config) {
  constexpr const char* kCall = "ncclCommInitRankScalable";
  if (commIds == nullptr || nId < 1) {
    return record(nullptr, ncclInvalidArgument,
                  str(kCall, ": nId is ", nId, " and commIds ", commIds == nullptr ? "NULL" : "set",
                      ": at least one unique id is needed"));
  }
  // One rendezvous is all hoop needs: every rank holds commIds[0], and the process that made it
  // serves the rendezvous. The other ids' rendezvous are never joined; each ends when
  // HOOP_INIT_TIMEOUT passes.
  return initRank(newcomm, nranks, commIds[0], myrank, config, kCall);
}

HOOP_NCCL_API ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  constexpr const char* kCall = "ncclCommInitAll";
  return guarded(nullptr, [&] {
    if (comms == nullptr) fail(hoopInvalidArgument, kCall, ": comm is NULL");
    if (ndev < 1) fail(hoopInvalidArgument, kCall, ": ndev ", ndev, " < 1");
    for (int i = 0; i < ndev; ++i) comms[i] = nullptr;
    for (int i = 0; devlist != nullptr && i < ndev; ++i) {
      if (devlist[i] < 0) fail(hoopInvalidArgument, kCall, ": devlist[", i, "] is ", devlist[i]);
    }
    hoopUniqueId id;
    passOn(hoopGetUniqueId(&id), kCall);
    // Every rank of the clique is in this process: each joins the rendezvous on a thread of its
    // own, since joining returns only once all have.
    std::vector<std::unique_ptr<ncclComm>> made;
    std::vector<hoopResult_t> results(static_cast<size_t>(ndev), hoopSuccess);
    std::vector<std::string> messages(static_cast<size_t>(ndev));
    for (int i = 0; i < ndev; ++i) {
      made.push_back(newComm(CommSettings{}));
      made.back()->device = devlist != nullptr ? devlist[i] : i;
    }
    std::vector<std::thread> threads;
    for (int i = 0; i < ndev; ++i) {
      threads.emplace_back([&, i] {
        const size_t at = static_cast<size_t>(i);
        results[at] = hoopCommInitRank(&made[at]->hoop, ndev, id, i);
        if (results[at] != hoopSuccess) messages[at] = hoopFailure(kCall);
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i] == hoopSuccess) continue;
      for (auto& comm : made) {
        if (comm->hoop != nullptr) hoopCommDestroy(comm->hoop);
      }
      fail(results[i], messages[i]);
    }
    for (int i = 0; i < ndev; ++i) {
      publish(made[static_cast<size_t>(i)].get());
      comms[i] = made[static_cast<size_t>(i)].release();
    }
    return ncclSuccess;
  });
}

HOOP_NCCL_API ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, "ncclCommFinalize");
    return passOn(hoopCommFinalize(c->hoop), "ncclCommFinalize");
  });
}

HOOP_NCCL_API ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return release(comm, "ncclCommDestroy", false);
}

HOOP_NCCL_API ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return release(comm, "ncclCommAbort", true);
}

HOOP_NCCL_API ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guarded(comm, [&] {
    liveComm(comm, "ncclCommRevoke");
    if (revokeFlags != NCCL_REVOKE_DEFAULT) {
      fail(hoopInvalidArgument, "ncclCommRevoke: revokeFlags is ", revokeFlags,
           "; NCCL_REVOKE_DEFAULT (0) is the only value");
    }
    fail(hoopInvalidUsage,
         "ncclCommRevoke: hoop cannot stop a communicator's work and keep the communicator: "
         "ncclCommAbort stops it and frees it, then make a new one (ncclCommInitRank)");
    return ncclSuccess;
  });
}

HOOP_NCCL_SECOND_NAME(GetVersion);
HOOP_NCCL_SECOND_NAME(GetUniqueId);
HOOP_NCCL_SECOND_NAME(CommInitRankConfig);
HOOP_NCCL_SECOND_NAME(CommInitRank);
HOOP_NCCL_SECOND_NAME(CommInitRankScalable);
HOOP_NCCL_SECOND_NAME(CommInitAll);
HOOP_NCCL_SECOND_NAME(CommFinalize);
HOOP_NCCL_SECOND_NAME(CommDestroy);
HOOP_NCCL_SECOND_NAME(CommAbort);
HOOP_NCCL_SECOND_NAME(CommRevoke);
