#include "nccl/nccl_group.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace hoop::nccl {
namespace {

struct PendingCall {
  ncclComm* comm;
  const char* call;
  bool device;
  Issue issue;
};

struct PendingCreation {
  ncclComm* target;
  const char* call;
  Create create;
};

struct GroupState {
  int depth = 0;
  std::vector<PendingCreation> creations;
  std::vector<PendingCall> calls;
};
thread_local GroupState group;

// How one part of a group ended: the first failure and its message, or success / in progress.
struct Outcome {
  ncclComm* comm = nullptr;
  ncclResult_t code = ncclSuccess;
  std::string message;

  bool failed() const { return code != ncclSuccess && code != ncclInProgress; }
  // Keeps the first failure; in progress outranks success.
  void merge(const Outcome& other) {
    if (failed()) return;
    if (other.failed() || other.code == ncclInProgress) *this = other;
  }
};

Outcome fromHoop(ncclComm* comm, hoopResult_t result, const char* call) {
  Outcome outcome{comm, toNccl(result), ""};
  if (outcome.failed()) outcome.message = hoopFailure(call);
  return outcome;
}

Outcome runCreation(const PendingCreation& creation) {
  hoopComm_t made = nullptr;
  Outcome outcome;
  try {
    outcome = fromHoop(creation.target, creation.create(&made), creation.call);
  } catch (const Error& e) {
    outcome = {creation.target, toNccl(e.code()), e.what()};
  } catch (const std::exception& e) {
    outcome = {creation.target, ncclInternalError, str(creation.call, ": ", e.what())};
  }
  if (creation.target != nullptr) {
    if (outcome.failed()) {
      creation.target->notCreated = outcome.message;
    } else {
      creation.target->hoop = made;
    }
  }
  return outcome;
}

// One communicator's calls inside one hoop group: collectives in call order, sends and receives
// together (hoop's group rules).
Outcome runShare(ncclComm* comm, const std::vector<const PendingCall*>& calls) {
  Outcome outcome{comm, ncclSuccess, ""};
  hoopGroupStart();
  for (const PendingCall* call : calls) outcome.merge(fromHoop(comm, call->issue(), call->call));
  outcome.merge(fromHoop(comm, hoopGroupEnd(), "ncclGroupEnd"));
  return outcome;
}

// Runs every job, on a thread each when there are several; the outcomes in job order.
template <typename Job>
std::vector<Outcome> runTogether(const std::vector<Job>& jobs,
                                 const std::function<Outcome(const Job&)>& run) {
  std::vector<Outcome> outcomes(jobs.size());
  if (jobs.size() == 1) {
    outcomes[0] = run(jobs[0]);
    return outcomes;
  }
  std::vector<std::thread> threads;
  threads.reserve(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        outcomes[i] = run(jobs[i]);
      } catch (const std::exception& e) {
        outcomes[i] = {nullptr, ncclInternalError, str("ncclGroupEnd: ", e.what())};
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

// Records each failure for its communicator and returns the first, or in progress / success.
ncclResult_t conclude(const std::vector<Outcome>& outcomes) {
  Outcome first;
  for (const Outcome& outcome : outcomes) {
    if (outcome.failed()) record(outcome.comm, outcome.code, outcome.message);
    first.merge(outcome);
  }
  if (first.failed()) record(first.comm, first.code, first.message);
  return first.code;
}

ncclResult_t endGroup(std::vector<PendingCreation> creations, std::vector<PendingCall> calls) {
  std::vector<Outcome> outcomes = runTogether<PendingCreation>(creations, runCreation);

  // Each communicator's share, in the order the communicators were first used.
  std::vector<ncclComm*> comms;
  for (const PendingCall& call : calls) {
    if (std::find(comms.begin(), comms.end(), call.comm) == comms.end()) {
      comms.push_back(call.comm);
    }
  }
  std::vector<std::vector<const PendingCall*>> shares(comms.size());
  bool anyDevice = false;
  for (const PendingCall& call : calls) {
    const size_t index =
        static_cast<size_t>(std::find(comms.begin(), comms.end(), call.comm) - comms.begin());
    shares[index].push_back(&call);
    anyDevice = anyDevice || call.device;
  }
  std::vector<size_t> indices(comms.size());
  for (size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  std::function<Outcome(const size_t&)> runIndex = [&](const size_t& i) {
    return runShare(comms[i], shares[i]);
  };
  if (anyDevice) {
    // Enqueued work returns at once: one communicator after the other, in this thread (the
    // CUDA device current here is the one the calls were made for).
    for (size_t i : indices) outcomes.push_back(runIndex(i));
  } else if (!indices.empty()) {
    std::vector<Outcome> shared = runTogether<size_t>(indices, runIndex);
    outcomes.insert(outcomes.end(), shared.begin(), shared.end());
  }
  return conclude(outcomes);
}

}  // namespace

bool inGroup() { return group.depth > 0; }

ncclResult_t submit(ncclComm* comm, const char* call, bool device, Issue issue) {
  if (group.depth > 0) {
    group.calls.push_back({comm, call, device, std::move(issue)});
    return ncclSuccess;
  }
  const hoopResult_t result = issue();
  if (result == hoopSuccess || result == hoopInProgress) return toNccl(result);
  return record(comm, toNccl(result), hoopFailure(call));
}

ncclResult_t createComm(ncclComm* target, const char* call, Create create) {
  if (group.depth > 0) {
    group.creations.push_back({target, call, std::move(create)});
    return ncclSuccess;
  }
  const Outcome outcome = runCreation({target, call, std::move(create)});
  if (outcome.failed()) return record(nullptr, outcome.code, outcome.message);
  return outcome.code;
}

}  // namespace hoop::nccl

using namespace hoop;
using namespace hoop::nccl;

HOOP_NCCL_API ncclResult_t ncclGroupStart(void) {
  ++group.depth;
  return ncclSuccess;
}

HOOP_NCCL_API ncclResult_t ncclGroupEnd(void) {
  return guarded(nullptr, [&] {
    if (group.depth == 0) fail(hoopInvalidUsage, "ncclGroupEnd without a matching ncclGroupStart");
    if (--group.depth > 0) return ncclSuccess;
    std::vector<PendingCreation> creations = std::move(group.creations);
    std::vector<PendingCall> calls = std::move(group.calls);
    group.creations.clear();
    group.calls.clear();
    return endGroup(std::move(creations), std::move(calls));
  });
}

HOOP_NCCL_API ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  return guarded(nullptr, [&] {
    if (group.depth == 0) {
      fail(hoopInvalidUsage, "ncclGroupSimulateEnd without a matching ncclGroupStart");
    }
    if (simInfo == nullptr) fail(hoopInvalidArgument, "ncclGroupSimulateEnd: simInfo is NULL");
    if (simInfo->size < sizeof(ncclSimInfo_t) || simInfo->magic != 0x74685283u) {
      fail(hoopInvalidArgument,
           "ncclGroupSimulateEnd: simInfo was not initialised with NCCL_SIM_INFO_INITIALIZER "
           "(size ",
           simInfo->size, ", magic 0x", std::hex, simInfo->magic, ")");
    }
    // As NCCL's, the simulation ends the group without running it.
    size_t dropped = 0;
    if (--group.depth == 0) {
      dropped = group.calls.size() + group.creations.size();
      for (const PendingCreation& creation : group.creations) {
        if (creation.target != nullptr) {
          creation.target->notCreated = "its group was ended by ncclGroupSimulateEnd";
        }
      }
      group.calls.clear();
      group.creations.clear();
    }
    fail(hoopInvalidUsage,
         "ncclGroupSimulateEnd: hoop has no model of NCCL's kernels to estimate a group's time; "
         "the group was ended without running its ",
         dropped, " call(s)");
    return ncclSuccess;
  });
}

HOOP_NCCL_SECOND_NAME(GroupStart);
HOOP_NCCL_SECOND_NAME(GroupEnd);
HOOP_NCCL_SECOND_NAME(GroupSimulateEnd);
