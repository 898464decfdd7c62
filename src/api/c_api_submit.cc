#include "api/c_api_submit.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "algorithms/registry.h"
#include "base/clock.h"
#include "base/timeline.h"
#include "core/device_team.h"

namespace hoop::capi {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<Deferred> ops;
};
thread_local GroupState group;

// The timeline's row for each kind of call.
constexpr int kCollectiveLane = 0;
constexpr int kPointToPointLane = 1;

// One call's timeline event: what ran, how, how many bytes, how long, and why it failed when it
// did (`failure` non-empty). Only with the timeline on.
void recordCall(const Deferred& op, Clock::time_point began, std::string schedule,
                const std::string& transport, const char* failure) {
  TimelineEvent event;
  event.start = timelineWallStart(began);
  event.duration = Clock::now() - began;
  event.category = "c-api";
  size_t bytes = 0;
  switch (op.kind) {
    case Deferred::Kind::kCollective:
      event.name = std::string(opKindName(op.collective.kind));
      event.lane = kCollectiveLane;
      bytes = op.collective.bytes();
      event.args.emplace_back("type", std::string(dataTypeName(op.collective.type)));
      event.args.emplace_back("count", std::to_string(op.collective.count));
      break;
    case Deferred::Kind::kBarrier:
      event.name = "barrier";
      event.lane = kCollectiveLane;
      break;
    case Deferred::Kind::kP2p:
      event.name = op.p2p.isSend ? "send" : "recv";
      event.lane = kPointToPointLane;
      bytes = op.p2p.count * dataTypeSize(op.p2p.type);
      event.args.emplace_back("peer", std::to_string(op.p2p.peer));
      break;
  }
  if (!schedule.empty()) event.args.emplace_back("schedule", std::move(schedule));
  event.args.emplace_back("transport", transport.empty() ? "none" : transport);
  event.args.emplace_back("bytes", std::to_string(bytes));
  event.args.emplace_back("communicator_rank", std::to_string(op.comm->rank.load()));
  if (*failure != '\0') event.args.emplace_back("error", failure);
  timelineRecord(event);
}

// A group's sends and receives on host memory, run together: one event.
void recordP2pGroup(hoopComm* comm, const std::vector<P2pOp>& ops, Clock::time_point began,
                    const char* failure) {
  TimelineEvent event;
  event.start = timelineWallStart(began);
  event.duration = Clock::now() - began;
  event.category = "c-api";
  event.name = "send/recv group";
  event.lane = kPointToPointLane;
  size_t sent = 0;
  size_t received = 0;
  for (const P2pOp& op : ops) (op.isSend ? sent : received) += op.count * dataTypeSize(op.type);
  event.args.emplace_back("operations", std::to_string(ops.size()));
  event.args.emplace_back("bytes sent", std::to_string(sent));
  event.args.emplace_back("bytes received", std::to_string(received));
  event.args.emplace_back("transport", comm->impl->transportsInUse());
  event.args.emplace_back("communicator_rank", std::to_string(comm->rank.load()));
  if (*failure != '\0') event.args.emplace_back("error", failure);
  timelineRecord(event);
}

void executeNow(const Deferred& op);

// Runs op; with the timeline on, also records it (the schedule is read before the call, which
// may settle a choice, under the operation lock as runCollective reads it). A call that fails
// is recorded too, with its error: the trace of a job that went wrong is the one that is read.
void execute(const Deferred& op) {
  if (!timelineOn()) return executeNow(op);
  const Clock::time_point began = Clock::now();
  std::string schedule;
  try {
    if (op.kind == Deferred::Kind::kCollective && op.collective.memory == MemoryKind::kHost &&
        !op.premultiply) {
      runOn(op.comm, [&](Communicator& c) {
        schedule = std::string(chooseSchedule(c, op.collective).schedule->name());
      });
    }
    executeNow(op);
  } catch (const std::exception& failure) {
    recordCall(op, began, std::move(schedule), op.comm->impl->transportsInUse(), failure.what());
    throw;
  }
  recordCall(op, began, std::move(schedule), op.comm->impl->transportsInUse(), "");
}

void executeNow(const Deferred& op) {
  switch (op.kind) {
    case Deferred::Kind::kCollective:
      runOn(op.comm, [&](Communicator& c) {
        const PreMulFactor* premultiply = op.premultiply ? &*op.premultiply : nullptr;
        if (op.collective.memory == MemoryKind::kDevice) {
          runDeviceCollective(c, op.collective, premultiply);
        } else if (premultiply != nullptr) {
          runPremultipliedCollective(c, op.collective, *premultiply);
        } else {
          runCollective(c, op.collective);
        }
      });
      break;
    case Deferred::Kind::kBarrier: runOn(op.comm, [&](Communicator& c) { runBarrier(c); }); break;
    case Deferred::Kind::kP2p:
      runOn(op.comm, [&](Communicator& c) {
        if (op.memory == MemoryKind::kDevice) {
          runDeviceP2pGroup(c, {op.p2p}, op.stream);
        } else {
          runP2pGroup(c, {op.p2p});
        }
      });
      break;
  }
}

// Runs comm's share of a group's operations: collectives in call order, then all point-to-point
// operations together (so matching sends and receives progress at the same time): those on host
// memory, then those on device memory, which must share one stream.
void executeGroup(hoopComm* comm, const std::vector<Deferred>& ops) {
  std::vector<P2pOp> hostP2p;
  std::vector<P2pOp> deviceP2p;
  void* deviceStream = nullptr;
  for (const Deferred& op : ops) {
    if (op.comm != comm) continue;
    if (op.kind != Deferred::Kind::kP2p) {
      execute(op);
    } else if (op.memory != MemoryKind::kDevice) {
      hostP2p.push_back(op.p2p);
    } else {
      if (!deviceP2p.empty() && op.stream != deviceStream) {
        fail(hoopInvalidUsage, "hoopGroupEnd: rank ", comm->rank.load(),
             ": the group's sends and receives on device memory use different streams; one "
             "group's point-to-point calls must share one stream");
      }
      deviceStream = op.stream;
      deviceP2p.push_back(op.p2p);
    }
  }
  if (!hostP2p.empty()) {
    const Clock::time_point began = Clock::now();
    try {
      runOn(comm, [&](Communicator& c) { runP2pGroup(c, hostP2p); });
    } catch (const std::exception& failure) {
      if (timelineOn()) recordP2pGroup(comm, hostP2p, began, failure.what());
      throw;
    }
    if (timelineOn()) recordP2pGroup(comm, hostP2p, began, "");
  }
  if (!deviceP2p.empty()) {
    runOn(comm, [&](Communicator& c) { runDeviceP2pGroup(c, deviceP2p, deviceStream); });
  }
}

}  // namespace

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
        str("rank ", comm->rank.load(),
            ": the communicator failed earlier and cannot be used (destroy "
            "or abort it): "));
  });
  return status == hoopSuccess ? hoopInProgress : status;
}

hoopResult_t submit(hoopComm* comm, Deferred op) {
  if (group.depth > 0) {
    group.ops.push_back(std::move(op));
    return hoopSuccess;
  }
  if (comm->queue != nullptr) return enqueue(comm, [op] { execute(op); });
  return guarded(comm, [&] { execute(op); });
}

bool inGroup() { return group.depth > 0; }

}  // namespace hoop::capi

using namespace hoop;
using namespace hoop::capi;

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
