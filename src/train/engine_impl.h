// Engine::Impl: the state shared by the submission side (engine.cc, user threads) and the
// background cycle (engine_cycle.cc, the engine's own thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hoop/train.hpp"
#include "train/coordinator.h"
#include "train/handle_table.h"
#include "train/local_request.h"
#include "train/response_executor.h"

namespace hoop::train {

using Clock = std::chrono::steady_clock;

inline Clock::duration seconds(double value) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
}

inline int queryComm(hoopResult_t (*function)(const hoopComm_t, int*), hoopComm_t comm) {
  int value = 0;
  check(function(comm, &value), comm);
  return value;
}

struct Engine::Impl {
  Impl(hoopComm_t communicator, EngineOptions engineOptions)
      : comm(communicator),
        options(engineOptions),
        rank(queryComm(hoopCommUserRank, communicator)),
        nranks(queryComm(hoopCommCount, communicator)),
        coordinator(nranks, options.cacheCapacity, options.stallTimeoutSeconds),
        executor(communicator, rank, nranks, options.fusionThresholdBytes),
        previouslyJoined(static_cast<size_t>(nranks)) {
    checkOptionsAgree();
  }

  // Every rank must pack fusion buffers and lay out the cache identically; a rank started with
  // other values would issue different collectives. Cycle and stall times may differ.
  void checkOptionsAgree() const;

  Handle submit(LocalRequest request);
  // All or nothing, and adopted by the engine thread in one cycle.
  std::vector<Handle> submitTogether(std::vector<LocalRequest> requests);
  void validate(const LocalRequest& request) const;
  void runCycles();
  bool cycle();
  void adoptIncoming();
  void voteOnStalls(std::vector<uint8_t>& control, const ControlLayout& layout,
                    Clock::time_point now);
  std::vector<std::vector<Announcement>> exchange(const std::vector<Announcement>& mine);
  void finish(LocalRequest& request, hoopResult_t code, const std::string& message);
  void deliverCompletions();
  void completeJoin(const CycleOutcome& outcome);
  void failEverything(hoopResult_t code, const std::string& message);
  std::string prefix() const { return "rank " + std::to_string(rank) + ": "; }

  const hoopComm_t comm;
  const EngineOptions options;
  const int rank;
  const int nranks;
  HandleTable handles;

  // Shared between user threads and the engine thread, under `mutex`.
  mutable std::mutex mutex;
  std::condition_variable joinChanged;
  std::vector<LocalRequest> incoming;
  bool stopRequested = false;
  bool joinRequested = false;
  uint64_t joinGeneration = 0;
  int lastJoined = -1;
  bool stopped = false;
  hoopResult_t failureCode = hoopSuccess;
  std::string failure;
  EngineStats stats;

  // The engine thread's own.
  Coordinator coordinator;
  ResponseExecutor executor;
  std::list<LocalRequest> pending;  // in submission order
  std::unordered_map<std::string, std::list<LocalRequest>::iterator> pendingByName;
  std::set<std::string> warnedStalls;
  std::vector<bool> previouslyJoined;
  // Finished this cycle; handed to waiters only after the stats count them, so a waiter that
  // wakes up reads stats that include its request.
  std::vector<HandleTable::Completion> completions;
  std::thread thread;
};

}  // namespace hoop::train
