// Engine: the background cycle (gather what is ready, agree, run) around the coordinator and the
// executor, plus the submission side that user threads call.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <list>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/logging.h"
#include "hoop/train.hpp"
#include "train/coordinator.h"
#include "train/handle_table.h"
#include "train/local_request.h"
#include "train/response_executor.h"

namespace hoop::train {
namespace {

using Clock = std::chrono::steady_clock;

int queryComm(hoopResult_t (*function)(const hoopComm_t, int*), hoopComm_t comm) {
  int value = 0;
  check(function(comm, &value), comm);
  return value;
}

Clock::duration seconds(double value) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(value));
}

}  // namespace

struct Engine::Impl {
  Impl(hoopComm_t communicator, EngineOptions engineOptions)
      : comm(communicator),
        options(engineOptions),
        rank(queryComm(hoopCommUserRank, communicator)),
        nranks(queryComm(hoopCommCount, communicator)),
        coordinator(nranks, options.cacheCapacity, options.stallTimeoutSeconds),
        executor(communicator, rank, nranks, options.fusionThresholdBytes),
        previouslyJoined(static_cast<size_t>(nranks)) {}

  Handle submit(LocalRequest request);
  void validate(const LocalRequest& request) const;
  void runCycles();
  bool cycle();
  void adoptIncoming();
  void voteOnStalls(std::vector<uint8_t>& control, const ControlLayout& layout,
                    Clock::time_point now);
  std::vector<std::vector<Announcement>> exchange(const std::vector<Announcement>& mine);
  void finish(LocalRequest& request, hoopResult_t code, const std::string& message);
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
  std::thread thread;
};

void Engine::Impl::validate(const LocalRequest& request) const {
  const RequestShape& shape = request.shape;
  auto reject = [&](const std::string& why) {
    throw Exception(hoopInvalidArgument,
                    prefix() + kindName(shape.kind) + " of tensor '" + request.name + "': " + why);
  };
  if (shape.kind == RequestKind::kBarrier) return;
  if (elementSize(shape.type) == 0) reject("unknown data type " + std::to_string(shape.type));
  if ((shape.kind == RequestKind::kAllReduce || shape.kind == RequestKind::kReduceScatter) &&
      (shape.op < hoopSum || shape.op >= hoopNumOps)) {
    reject("unknown reduction " + std::to_string(shape.op));
  }
  if ((shape.prescale != 1.0 || shape.postscale != 1.0) && !isFloatingPoint(shape.type)) {
    reject(std::string("scale factors need a floating-point type, not ") + typeName(shape.type));
  }
  if (shape.kind == RequestKind::kBroadcast && (shape.root < 0 || shape.root >= nranks)) {
    reject("root " + std::to_string(shape.root) + " is outside 0.." + std::to_string(nranks - 1));
  }
  if (inputElements(shape, nranks) > 0 && request.send == nullptr) reject("no input buffer");
  if (outputElements(shape, nranks) > 0 && request.recv == nullptr) reject("no output buffer");
}

Engine::Handle Engine::Impl::submit(LocalRequest request) {
  validate(request);
  request.handle = handles.open(request.name, kindName(request.shape.kind), rank);
  request.submittedAt = Clock::now();
  std::unique_lock lock(mutex);
  if (stopped) {
    const std::string message = prefix() + kindName(request.shape.kind) + " of tensor '" +
                                request.name + "' cannot run: the engine stopped: " + failure;
    const hoopResult_t code = failureCode;
    lock.unlock();
    handles.complete(request.handle, code, message);
    return request.handle;
  }
  const Handle handle = request.handle;
  incoming.push_back(std::move(request));
  return handle;
}

void Engine::Impl::runCycles() {
  try {
    const auto period = seconds(options.cycleTimeMs / 1000.0);
    auto next = Clock::now();
    for (;;) {
      std::this_thread::sleep_until(next);
      // A cycle that overran starts the next one at once instead of bunching up missed ones.
      next = std::max(next + period, Clock::now());
      if (!cycle()) return;
    }
  } catch (const Exception& e) {
    failEverything(e.code(), e.what());
  } catch (const std::exception& e) {
    failEverything(hoopInternalError, prefix() + "training engine: " + e.what());
  }
}

void Engine::Impl::adoptIncoming() {
  std::vector<LocalRequest> arrived;
  {
    std::lock_guard lock(mutex);
    arrived.swap(incoming);
  }
  for (LocalRequest& request : arrived) {
    pending.push_back(std::move(request));
    pendingByName[pending.back().name] = std::prev(pending.end());
  }
}

bool Engine::Impl::cycle() {
  bool stopVote = false;
  bool joinVote = false;
  {
    std::lock_guard lock(mutex);
    stopVote = stopRequested;
    joinVote = joinRequested;
  }
  adoptIncoming();
  const Clock::time_point now = Clock::now();
  const ControlLayout layout = coordinator.layout();

  // See coordinator.h for the layout; every byte is ANDed (hoopMin) across ranks.
  std::vector<uint8_t> control(layout.total, 1);
  control[ControlLayout::kShuttingDown] = stopVote ? 1 : 0;
  control[ControlLayout::kJoined + static_cast<size_t>(rank)] = joinVote ? 1 : 0;
  for (size_t slot = 0; slot < coordinator.cacheSize(); ++slot) {
    control[layout.cache + 2 * slot] = joinVote ? 1 : 0;
  }
  // A cached request that has waited half the stall time goes by name, so the stall check (which
  // watches names under negotiation) sees it too.
  const Clock::duration stallWarning = seconds(options.stallTimeoutSeconds / 2);
  std::vector<Announcement> announce;
  for (LocalRequest& request : pending) {
    if (request.announcedByName) continue;
    const auto slot = coordinator.cacheSlot(request.name, request.shape);
    if (slot && now - request.submittedAt < stallWarning) {
      control[layout.cache + 2 * *slot] = 1;
      control[layout.cache + 2 * *slot + 1] = 0;
    } else {
      announce.push_back({request.name, request.shape});
      request.announcedByName = true;
    }
  }
  control[ControlLayout::kNothingToAnnounce] = announce.empty() ? 1 : 0;
  voteOnStalls(control, layout, now);

  if (hoopResult_t result = hoopAllReduce(control.data(), control.data(), control.size(), hoopUint8,
                                          hoopMin, comm, nullptr);
      result != hoopSuccess) {
    throw Exception(result,
                    prefix() + "training engine negotiation failed: " + hoopGetLastError(comm));
  }
  const bool byName = control[ControlLayout::kNothingToAnnounce] == 0;
  std::vector<std::vector<Announcement>> announcements;
  if (byName) announcements = exchange(announce);

  const CycleOutcome outcome = coordinator.decide(control, announcements, now);
  for (const Response& response : outcome.responses) warnedStalls.erase(response.name);

  ExecutionCounters counters;
  size_t finishedOk = 0;
  size_t finishedFailed = 0;
  executor.run(
      outcome.responses,
      [&](const std::string& name) -> LocalRequest* {
        auto found = pendingByName.find(name);
        return found == pendingByName.end() ? nullptr : &*found->second;
      },
      [&](LocalRequest& request, hoopResult_t code, const std::string& message) {
        ++(code == hoopSuccess ? finishedOk : finishedFailed);
        finish(request, code, message);
      },
      counters);

  {
    std::lock_guard lock(mutex);
    ++stats.cycles;
    if (byName) ++stats.negotiationRounds;
    stats.cacheHits += static_cast<size_t>(
        std::count_if(outcome.responses.begin(), outcome.responses.end(),
                      [](const Response& response) { return response.fromCache; }));
    stats.collectiveCalls += counters.collectiveCalls;
    stats.fusedTensors += counters.fusedTensors;
    stats.completedRequests += finishedOk;
    stats.failedRequests += finishedFailed;
  }
  completeJoin(outcome);

  if (outcome.shuttingDown) {
    failEverything(hoopInvalidUsage,
                   "the engine shut down on every rank before every rank submitted it");
    return false;
  }
  return true;
}

void Engine::Impl::voteOnStalls(std::vector<uint8_t>& control, const ControlLayout& layout,
                                Clock::time_point now) {
  const Clock::duration limit = seconds(options.stallTimeoutSeconds);
  const auto& negotiations = coordinator.negotiations();
  for (size_t i = 0; i < negotiations.size(); ++i) {
    const Negotiation& n = negotiations[i];
    Clock::time_point since = n.createdAt;
    if (auto mine = pendingByName.find(n.name); mine != pendingByName.end()) {
      since = std::min(since, mine->second->submittedAt);
    }
    const Clock::duration waited = now - since;
    if (waited >= limit) control[layout.negotiations + i] = 0;
    if (waited >= limit / 2 && warnedStalls.insert(n.name).second) {
      std::string missing;
      std::string present;
      for (size_t r = 0; r < n.shapes.size(); ++r) {
        std::string& list = n.shapes[r] ? present : missing;
        list += (list.empty() ? "" : ", ") + std::to_string(r);
      }
      log(LogLevel::kWarn, LogSubsys::kColl, rank, "training engine: tensor '", n.name,
          "' has waited ", std::chrono::duration<double>(waited).count(),
          " s: submitted by rank(s) ", present, ", not yet by rank(s) ", missing,
          "; it fails after ", options.stallTimeoutSeconds, " s (HOOP_STALL_CHECK_TIME)");
    }
  }
}

std::vector<std::vector<Announcement>> Engine::Impl::exchange(
    const std::vector<Announcement>& mine) {
  auto checked = [&](hoopResult_t result) {
    if (result != hoopSuccess) {
      throw Exception(result,
                      prefix() + "training engine name exchange failed: " + hoopGetLastError(comm));
    }
  };
  const std::vector<uint8_t> bytes = encodeAnnouncements(mine);
  const uint64_t length = bytes.size();
  std::vector<uint64_t> lengths(static_cast<size_t>(nranks));
  checked(hoopAllGather(&length, lengths.data(), 1, hoopUint64, comm, nullptr));
  const size_t block = *std::max_element(lengths.begin(), lengths.end());
  std::vector<uint8_t> all(block * lengths.size());
  std::copy(bytes.begin(), bytes.end(), all.begin() + static_cast<std::ptrdiff_t>(block * rank));
  checked(hoopAllGather(all.data() + block * static_cast<size_t>(rank), all.data(), block,
                        hoopUint8, comm, nullptr));
  std::vector<std::vector<Announcement>> perRank;
  for (size_t r = 0; r < lengths.size(); ++r) {
    perRank.push_back(decodeAnnouncements(std::span(all).subspan(r * block, block)));
  }
  return perRank;
}

void Engine::Impl::finish(LocalRequest& request, hoopResult_t code, const std::string& message) {
  handles.complete(request.handle, code, message.empty() ? message : prefix() + message);
  auto found = pendingByName.find(request.name);
  if (found != pendingByName.end()) {
    pending.erase(found->second);
    pendingByName.erase(found);
  }
}

void Engine::Impl::completeJoin(const CycleOutcome& outcome) {
  if (!outcome.allJoined) {
    previouslyJoined = outcome.joined;
    return;
  }
  // The last to join: among the ranks that joined in this cycle, the highest.
  int last = nranks - 1;
  for (int r = nranks - 1; r >= 0; --r) {
    if (!previouslyJoined[static_cast<size_t>(r)]) {
      last = r;
      break;
    }
  }
  std::fill(previouslyJoined.begin(), previouslyJoined.end(), false);
  {
    std::lock_guard lock(mutex);
    joinRequested = false;
    lastJoined = last;
    ++joinGeneration;
  }
  joinChanged.notify_all();
}

void Engine::Impl::failEverything(hoopResult_t code, const std::string& message) {
  {
    std::lock_guard lock(mutex);
    stopped = true;
    failureCode = code;
    failure = message;
  }
  joinChanged.notify_all();
  adoptIncoming();
  size_t failed = 0;
  while (!pending.empty()) {
    LocalRequest& request = pending.front();
    const std::string text = prefix() + kindName(request.shape.kind) + " of tensor '" +
                             request.name + "' did not complete: " + message;
    handles.complete(request.handle, code, text);
    pendingByName.erase(request.name);
    pending.pop_front();
    ++failed;
  }
  std::lock_guard lock(mutex);
  stats.failedRequests += failed;
}

Engine::Engine(hoopComm_t comm, EngineOptions options)
    : impl_(std::make_unique<Impl>(comm, options)) {
  impl_->thread = std::thread([impl = impl_.get()] { impl->runCycles(); });
}

Engine::~Engine() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopRequested = true;
  }
  impl_->thread.join();
}

Engine::Handle Engine::allReduce(std::string name, const void* send, void* recv, size_t count,
                                 hoopDataType_t type, hoopRedOp_t op, double prescale,
                                 double postscale) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllReduce, type, op, 0, count, prescale, postscale};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::broadcast(std::string name, void* data, size_t count, hoopDataType_t type,
                                 int root) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kBroadcast, type, hoopSum, root, count, 1.0, 1.0};
  request.send = data;
  request.recv = data;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::allGather(std::string name, const void* send, size_t count,
                                 hoopDataType_t type, AllGatherAllocator allocate) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllGather, type, hoopSum, 0, count, 1.0, 1.0};
  request.send = send;
  request.allocate = std::move(allocate);
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::allToAll(std::string name, const void* send, void* recv, size_t countPerRank,
                                hoopDataType_t type) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kAllToAll, type, hoopSum, 0, countPerRank, 1.0, 1.0};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::reduceScatter(std::string name, const void* send, void* recv,
                                     size_t recvCount, hoopDataType_t type, hoopRedOp_t op) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kReduceScatter, type, op, 0, recvCount, 1.0, 1.0};
  request.send = send;
  request.recv = recv;
  return impl_->submit(std::move(request));
}

Engine::Handle Engine::barrier(std::string name) {
  LocalRequest request;
  request.name = std::move(name);
  request.shape = {RequestKind::kBarrier, hoopUint8, hoopSum, 0, 0, 1.0, 1.0};
  return impl_->submit(std::move(request));
}

int Engine::join() {
  std::unique_lock lock(impl_->mutex);
  const uint64_t generation = impl_->joinGeneration;
  impl_->joinRequested = true;
  impl_->joinChanged.wait(lock,
                          [&] { return impl_->joinGeneration != generation || impl_->stopped; });
  if (impl_->joinGeneration == generation) {
    throw Exception(impl_->failureCode,
                    impl_->prefix() + "join did not complete: " + impl_->failure);
  }
  return impl_->lastJoined;
}

bool Engine::poll(Handle handle) { return impl_->handles.poll(handle); }

void Engine::wait(Handle handle) { impl_->handles.wait(handle); }

void Engine::synchronize() { impl_->handles.waitUpTo(impl_->handles.newest()); }

Engine::Stats Engine::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

int Engine::rank() const { return impl_->rank; }

int Engine::size() const { return impl_->nranks; }

}  // namespace hoop::train
