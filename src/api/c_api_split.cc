// hoopCommSplit: new communicators from the ranks of one (core/comm_split.h has the exchange).
//
// The exchange is an operation of the parent: run now on a blocking parent, queued behind the
// parent's earlier calls on a non-blocking one. The new communicator is then made as
// hoopCommInitRankConfig makes one: now when it is blocking, on its own queue's thread when not
// (which first waits for the parent's queue to have run the exchange).
#include <chrono>
#include <future>
#include <memory>

#include "api/c_api_init.h"
#include "api/c_api_submit.h"
#include "core/comm_split.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

constexpr const char* kCall = "hoopCommSplit";

// This rank's side of the split: what it brings to the exchange, the settings of its new
// communicator, and, when its arguments are wrong, the error it returns (it still takes part).
struct Side {
  SplitRequest request;
  CommSettings settings;
  std::string refusal;
};

Side checkSide(hoopComm* comm, int color, int key, const hoopComm_t* newcomm,
               const hoopConfig_t* config) {
  Side side;
  side.request.color = color;
  side.request.key = key;
  const int rank = comm->rank.load();
  try {
    if (newcomm == nullptr) {
      side.request.refusal = SplitRefusal::kNoOutput;
      fail(hoopInvalidArgument, kCall, ": rank ", rank, ": newcomm is NULL");
    }
    if (color < HOOP_SPLIT_NOCOLOR) {
      side.request.refusal = SplitRefusal::kBadColor;
      fail(hoopInvalidArgument, kCall, ": rank ", rank, ": color ", color,
           " is negative and not HOOP_SPLIT_NOCOLOR (-1)");
    }
    side.request.refusal = SplitRefusal::kBadConfig;
    side.settings = inheritSettings(comm->settings, config, kCall);
    side.request.refusal = SplitRefusal::kNone;
  } catch (const Error& e) {
    side.refusal = e.what();
  }
  side.request.rendezvousTimeout = side.settings.config.initTimeout;
  return side;
}

// The error every rank returns when some rank refused (nothing is made).
[[noreturn]] void failRefused(int rank, const SplitPlan& plan) {
  fail(hoopInvalidArgument, kCall, ": rank ", rank, ": no communicator was made: ", plan.refusals);
}

// The new communicator, made from `plan` (this rank a member) with `settings`.
hoopResult_t makeMember(std::shared_ptr<SplitPlan> plan, const CommSettings& settings,
                        hoopComm_t* newcomm) {
  MakeCommunicator make = [plan](hoopComm& comm,
                                 const std::function<void(Communicator*)>& announce) {
    return Communicator::create(plan->id, plan->size, plan->rank, std::move(plan->root),
                                comm.settings.config, announce);
  };
  if (!settings.blocking) return initNonBlocking(newcomm, plan->rank, settings, std::move(make));
  return initBlocking(newcomm, plan->rank, settings, make);
}

// The plan a non-blocking parent's queue will make. `waiting` is the new communicator when it is
// non-blocking (whose abort ends the wait), else null.
SplitPlan awaitPlan(std::future<SplitPlan>& future, hoopComm* waiting) {
  while (future.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (waiting == nullptr) continue;
    std::lock_guard lock(waiting->initMutex);
    if (waiting->aborting) {
      fail(hoopRemoteError, kCall, ": aborted while waiting for the parent's split exchange");
    }
  }
  try {
    return future.get();
  } catch (const std::future_error&) {
    fail(hoopInvalidUsage, kCall,
         ": the parent communicator's queue dropped the split's exchange (the parent was "
         "aborted, or an earlier call on it failed)");
  }
}

// A blocking parent: the exchange now, then the new communicator.
hoopResult_t splitNow(hoopComm* comm, const Side& side, hoopComm_t* newcomm) {
  auto plan = std::make_shared<SplitPlan>();
  hoopResult_t status = guarded(comm, [&] {
    runOn(comm, [&](Communicator& c) { *plan = planSplit(c, side.request); });
    if (!side.refusal.empty()) fail(hoopInvalidArgument, side.refusal);
    if (!plan->refusals.empty()) failRefused(comm->rank.load(), *plan);
  });
  if (status != hoopSuccess || !plan->member) return status;
  status = makeMember(plan, side.settings, newcomm);
  // The new communicator's failure, told on the parent too (the call was made on it).
  if (status != hoopSuccess && status != hoopInProgress) {
    record(comm, status, hoopGetLastError(nullptr));
  }
  return status;
}

// A non-blocking parent: the exchange queued behind its earlier calls.
hoopResult_t splitQueued(hoopComm* comm, const Side& side, hoopComm_t* newcomm) {
  auto promise = std::make_shared<std::promise<SplitPlan>>();
  auto future = std::make_shared<std::future<SplitPlan>>(promise->get_future());
  const SplitRequest request = side.request;
  hoopResult_t status = enqueue(comm, [comm, request, promise] {
    SplitPlan plan;
    try {
      runOn(comm, [&](Communicator& c) { plan = planSplit(c, request); });
    } catch (...) {
      promise->set_exception(std::current_exception());
      throw;
    }
    promise->set_value(std::move(plan));
  });
  if (status != hoopInProgress) return status;
  if (!side.refusal.empty()) return record(comm, hoopInvalidArgument, side.refusal);
  if (side.request.color == HOOP_SPLIT_NOCOLOR) return hoopInProgress;

  if (side.settings.blocking) {
    auto plan = std::make_shared<SplitPlan>();
    status = guarded(comm, [&] {
      *plan = awaitPlan(*future, nullptr);
      if (!plan->refusals.empty()) failRefused(comm->rank.load(), *plan);
    });
    if (status != hoopSuccess) return status;
    return makeMember(plan, side.settings, newcomm);
  }
  // Non-blocking: its rank is known once the parent's queue has run the exchange.
  const int parentRank = comm->rank.load();
  return initNonBlocking(
      newcomm, -1, side.settings,
      [future, parentRank](hoopComm& made, const std::function<void(Communicator*)>& announce) {
        SplitPlan plan = awaitPlan(*future, &made);
        if (!plan.refusals.empty()) failRefused(parentRank, plan);
        made.rank = plan.rank;
        return Communicator::create(plan.id, plan.size, plan.rank, std::move(plan.root),
                                    made.settings.config, announce);
      });
}

}  // namespace

HOOP_API hoopResult_t hoopCommSplit(hoopComm_t comm, int color, int key, hoopComm_t* newcomm,
                                    hoopConfig_t* config) {
  Side side;
  hoopResult_t status = guarded(comm, [&] {
    if (newcomm != nullptr) *newcomm = nullptr;
    usableComm(comm, kCall);
    if (inGroup()) {
      fail(hoopInvalidUsage, kCall, ": rank ", comm->rank.load(),
           ": not inside hoopGroupStart/hoopGroupEnd (the new communicator is needed at once)");
    }
    side = checkSide(comm, color, key, newcomm, config);
  });
  if (status != hoopSuccess) return status;
  return comm->queue != nullptr ? splitQueued(comm, side, newcomm) : splitNow(comm, side, newcomm);
}
