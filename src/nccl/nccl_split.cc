// New communicators from an existing one: ncclCommSplit on hoopCommSplit, and ncclCommShrink,
// which hoop has no call for: the ranks that stay agree on a fresh unique id over the parent and
// initialise with it.
#include <memory>
#include <thread>
#include <vector>

#include "nccl/nccl_comm.h"
#include "nccl/nccl_config.h"
#include "nccl/nccl_group.h"

using namespace hoop;
using namespace hoop::nccl;

namespace {

// A child's settings: its own config, or with NULL the parent's (NCCL's rule).
CommSettings childSettings(const ncclComm* parent, const ncclConfig_t* config, const char* call) {
  if (config != nullptr) return readConfig(config, call);
  CommSettings inherited;
  inherited.hoop = parent->settings;
  inherited.name = parent->name;
  return inherited;
}

// A handle for a child of `parent`, live and bound to the parent's device, whose communicator
// `create` makes (now, or at ncclGroupEnd). Hands it out through *out unless creation failed.
ncclResult_t makeChild(ncclComm* parent, const CommSettings& settings, ncclComm_t* out,
                       const char* call,
                       const std::function<hoopResult_t(hoopComm_t*, hoopConfig_t*)>& create) {
  auto child = std::make_unique<ncclComm>();
  child->settings = settings.hoop;
  child->name = settings.name;
  child->device = parent->device;
  ncclComm* raw = child.get();
  publish(raw);
  const ncclResult_t result = createComm(
      raw, call, [raw, create](hoopComm_t* made) { return create(made, &raw->settings); });
  if (result != ncclSuccess && result != ncclInProgress) {
    withdraw(raw, call);
    return result;
  }
  *out = child.release();
  return result;
}

// Waits for what a non-blocking communicator queued to finish; its result.
hoopResult_t settle(hoopComm_t comm, hoopResult_t result) {
  while (result == hoopInProgress) {
    std::this_thread::yield();
    const hoopResult_t asked = hoopCommGetAsyncError(comm, &result);
    if (asked != hoopSuccess) return asked;
  }
  return result;
}

}  // namespace

HOOP_NCCL_API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                         ncclConfig_t* config) {
  constexpr const char* kCall = "ncclCommSplit";
  return guarded(comm, [&] {
    ncclComm* parent = usableComm(comm, kCall);
    if (newcomm == nullptr) fail(hoopInvalidArgument, kCall, ": newcomm is NULL");
    *newcomm = nullptr;
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
      fail(hoopInvalidArgument, kCall, ": color ", color,
           " is negative and not NCCL_SPLIT_NOCOLOR (-1)");
    }
    const CommSettings settings = childSettings(parent, config, kCall);
    const hoopComm_t parentHoop = parent->hoop;
    // Without a config hoop's split passes the parent's settings on itself.
    const bool inherit = config == nullptr;
    if (color == NCCL_SPLIT_NOCOLOR) {
      // This rank takes part in the split and joins no communicator: *newcomm stays NULL.
      hoopConfig_t given = settings.hoop;
      return createComm(nullptr, kCall,
                        [parentHoop, key, given, inherit](hoopComm_t* made) mutable {
                          return hoopCommSplit(parentHoop, HOOP_SPLIT_NOCOLOR, key, made,
                                               inherit ? nullptr : &given);
                        });
    }
    return makeChild(parent, settings, newcomm, kCall,
                     [parentHoop, color, key, inherit](hoopComm_t* made, hoopConfig_t* given) {
                       return hoopCommSplit(parentHoop, color, key, made,
                                            inherit ? nullptr : given);
                     });
  });
}

HOOP_NCCL_API ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                          int excludeRanksCount, ncclComm_t* newcomm,
                                          ncclConfig_t* config, int shrinkFlags) {
  constexpr const char* kCall = "ncclCommShrink";
  return guarded(comm, [&] {
    ncclComm* parent = usableComm(comm, kCall);
    if (newcomm == nullptr) fail(hoopInvalidArgument, kCall, ": newcomm is NULL");
    *newcomm = nullptr;
    if (shrinkFlags == NCCL_SHRINK_ABORT) {
      fail(hoopInvalidUsage, kCall,
           ": NCCL_SHRINK_ABORT shrinks a communicator whose work must be stopped, which hoop "
           "cannot do and keep the communicator; abort it (ncclCommAbort) and make a new one "
           "from a fresh unique id, or shrink a working one with NCCL_SHRINK_DEFAULT");
    }
    if (shrinkFlags != NCCL_SHRINK_DEFAULT) {
      fail(hoopInvalidArgument, kCall, ": shrinkFlags is ", shrinkFlags,
           ", neither NCCL_SHRINK_DEFAULT nor NCCL_SHRINK_ABORT");
    }
    if (excludeRanksCount < 0 || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
      fail(hoopInvalidArgument, kCall, ": excludeRanksCount is ", excludeRanksCount,
           " and excludeRanksList is ", excludeRanksList == nullptr ? "NULL" : "set");
    }
    int size = 0;
    int rank = 0;
    passOn(hoopCommCount(parent->hoop, &size), kCall);
    passOn(hoopCommUserRank(parent->hoop, &rank), kCall);
    std::vector<bool> excluded(static_cast<size_t>(size), false);
    for (int i = 0; i < excludeRanksCount; ++i) {
      const int r = excludeRanksList[i];
      if (r < 0 || r >= size) {
        fail(hoopInvalidArgument, kCall, ": excludeRanksList[", i, "] = ", r,
             " is not a rank of this communicator (", size, " ranks)");
      }
      if (excluded[static_cast<size_t>(r)]) {
        fail(hoopInvalidArgument, kCall, ": rank ", r, " is in excludeRanksList twice");
      }
      excluded[static_cast<size_t>(r)] = true;
    }
    if (excluded[static_cast<size_t>(rank)]) {
      fail(hoopInvalidUsage, kCall, ": rank ", rank,
           " is in its own excludeRanksList; only the ranks that stay call ncclCommShrink");
    }
    std::vector<int> staying;
    int newRank = 0;
    for (int r = 0; r < size; ++r) {
      if (excluded[static_cast<size_t>(r)]) continue;
      if (r == rank) newRank = static_cast<int>(staying.size());
      staying.push_back(r);
    }
    const CommSettings settings = childSettings(parent, config, kCall);
    const hoopComm_t parentHoop = parent->hoop;
    return makeChild(
        parent, settings, newcomm, kCall,
        [parentHoop, staying, rank, newRank](hoopComm_t* made, hoopConfig_t* given) {
          // The first rank that stays makes the unique id and sends it to the others over the
          // parent, which must still work.
          const int leader = staying.front();
          hoopUniqueId id{};
          if (rank == leader) {
            if (hoopResult_t r = hoopGetUniqueId(&id); r != hoopSuccess) return r;
          }
          hoopResult_t first = hoopSuccess;
          hoopGroupStart();
          for (int peer : staying) {
            if (rank == leader && peer != leader) {
              first = first != hoopSuccess
                          ? first
                          : hoopSend(&id, sizeof(id), hoopUint8, peer, parentHoop, nullptr);
            }
          }
          if (rank != leader)
            first = hoopRecv(&id, sizeof(id), hoopUint8, leader, parentHoop, nullptr);
          const hoopResult_t ended = settle(parentHoop, hoopGroupEnd());
          if (first != hoopSuccess) return first;
          if (ended != hoopSuccess) return ended;
          return hoopCommInitRankConfig(made, static_cast<int>(staying.size()), id, newRank, given);
        });
  });
}

HOOP_NCCL_SECOND_NAME(CommSplit);
HOOP_NCCL_SECOND_NAME(CommShrink);
