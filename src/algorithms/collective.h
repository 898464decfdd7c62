// One collective call as the algorithms see it, and the entry points that run them.
#pragma once

#include <cstddef>
#include <vector>

#include "base/types.h"
#include "device/executor.h"
#include "device/memory_kind.h"
#include "transport/connection.h"

namespace hoop {

class Team;

struct CollectiveArgs {
  OpKind kind = OpKind::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  // Elements: per rank for allgather (send), reducescatter (recv) and alltoall (each block),
  // else the whole buffer.
  size_t count = 0;
  DataType type = DataType::kFloat32;
  RedOp op = RedOp::kSum;
  int root = 0;
  uint32_t seq = 0;  // this communicator's collective number, set by runCollective
  // Pipeline piece size the tuner chose for this call (set by runCollective); 0: HOOP_CHUNK_SIZE.
  size_t pieceBytes = 0;
  // Where send and recv live, which picks the executor that moves and reduces them
  // (device/executor.h), and the stream its work is ordered on (null for host memory).
  MemoryKind memory = MemoryKind::kHost;
  void* stream = nullptr;
  // The executor bound to that stream, for device memory (the device team makes it per call);
  // null: the one registered for `memory` (executorFor).
  Executor* executor = nullptr;

  FrameTag tag() const {
    return {
        kind,
        seq,
        {count, static_cast<uint8_t>(type), static_cast<uint8_t>(op), static_cast<uint32_t>(root)}};
  }
  size_t bytes() const { return count * dataTypeSize(type); }
};

// The executor that runs `args`'s copies and reductions.
inline Executor& executorOf(const CollectiveArgs& args) {
  return args.executor != nullptr ? *args.executor : executorFor(args.memory);
}

// One side of a point-to-point exchange inside a group.
struct P2pOp {
  bool isSend = true;
  int peer = 0;
  void* buffer = nullptr;  // const for sends
  size_t count = 0;
  DataType type = DataType::kInt8;
  // For a send to or receive from this rank itself (a copy): the executor of the buffers' memory;
  // null: host memory.
  Executor* executor = nullptr;
};

// Picks the algorithm (HOOP_ALGO forces one) and runs the collective to completion.
void runCollective(Team& comm, const CollectiveArgs& args);
// The schedule runCollective would run for `args` (the same on every rank).
struct AlgorithmEntry;
struct ScheduleChoice {
  const AlgorithmEntry* schedule = nullptr;
  size_t pieceBytes = 0;  // 0: the schedule's pieces are HOOP_CHUNK_SIZE
};
ScheduleChoice chooseSchedule(const Team& comm, const CollectiveArgs& args);
// Whether that choice is fixed for calls like `args` from now on: false while their size class
// is still timing schedules (schedule_trial.h). The same on every rank.
bool scheduleSettled(const Team& comm, const CollectiveArgs& args);
// Runs the sends and receives of one group concurrently, to completion.
void runP2pGroup(Team& comm, const std::vector<P2pOp>& ops);
void runBarrier(Team& comm);
// hoopCommSetAlgorithms: checks that every rank passed the same rules (hoopInvalidUsage naming a
// rank that did not), then adopts them for the calls after it.
class AlgoOverrides;
void setAlgorithms(Team& comm, AlgoOverrides rules);

// The schedules, for tests that force one. Reductions (allreduce, reduce, reduce-scatter) reach
// them with two ranks or more: runCollective answers a one-rank call itself.
void ringAllReduce(Team& comm, const CollectiveArgs& args);
void directAllReduce(Team& comm, const CollectiveArgs& args);
// Small allreduces on one host: every rank reads every peer's input in place (eager messages,
// which every shared-memory connection offers for at least kOneShotMaxBytes).
inline constexpr size_t kOneShotMaxRanks = 8;
inline constexpr size_t kOneShotMaxBytes = 8192;
bool oneShotFits(const Team& comm, const CollectiveArgs& args);
void oneShotAllReduce(Team& comm, const CollectiveArgs& args);
// Small allreduces: log2(n) rounds trading the whole buffer with one partner per round.
void recursiveDoublingAllReduce(Team& comm, const CollectiveArgs& args);
// Mid and large allreduces: recursive-halving reduce-scatter, recursive-doubling allgather.
void rabenseifnerAllReduce(Team& comm, const CollectiveArgs& args);
// Mid-size allreduces: a direct reduce-scatter to each piece's owner, then a direct allgather.
void twoShotAllReduce(Team& comm, const CollectiveArgs& args);
// Mid-size allreduces: each half reduced up and broadcast down one of two complementary trees.
void doubleTreeAllReduce(Team& comm, const CollectiveArgs& args);
void hierarchicalAllReduce(Team& comm, const CollectiveArgs& args);
void ringAllGather(Team& comm, const CollectiveArgs& args);
// Small allgathers: ceil(log2 n) rounds of doubling exchanges, then one local rotation.
void bruckAllGather(Team& comm, const CollectiveArgs& args);
void hierarchicalAllGather(Team& comm, const CollectiveArgs& args);
void hierarchicalBroadcast(Team& comm, const CollectiveArgs& args);
void ringReduceScatter(Team& comm, const CollectiveArgs& args);
// Broadcasts down a pipelined binary tree: log2(n) hops to the last rank.
void treeBroadcast(Team& comm, const CollectiveArgs& args);
void chainBroadcast(Team& comm, const CollectiveArgs& args);
// Reduces up a pipelined binary tree: log2(n) hops from the last rank to the root.
void treeReduce(Team& comm, const CollectiveArgs& args);
void chainReduce(Team& comm, const CollectiveArgs& args);
void pairwiseAllToAll(Team& comm, const CollectiveArgs& args);

}  // namespace hoop
