// Engine::Impl's background cycle: gather what is ready on this rank, agree with the others
// (coordinator.h), run the agreed responses (response_executor.h), complete handles, and handle
// join, stalls, shutdown and communicator failures.
#include <algorithm>
#include <span>

#include "base/logging.h"
#include "base/timeline.h"
#include "train/engine_impl.h"

namespace hoop::train {

namespace {

// The timeline's rows for the engine's phases (the C API's calls use rows 0 and 1).
constexpr int kQueueLane = 2;
constexpr int kNegotiationLane = 3;
constexpr int kRunLane = 4;

void recordPhase(const LocalRequest& request, const char* phase, int lane, Clock::time_point from,
                 Clock::time_point to, const std::string& failure = {}) {
  TimelineEvent event;
  event.name = request.name;
  event.category = std::string("engine.") + phase;
  event.start = timelineWallStart(from);
  event.duration = to - from;
  event.lane = lane;
  event.args.emplace_back("phase", phase);
  event.args.emplace_back("kind", std::string(kindName(request.shape.kind)));
  event.args.emplace_back("count", std::to_string(request.shape.count));
  if (!failure.empty()) event.args.emplace_back("error", failure);
  timelineRecord(event);
}

// A finished request's three phases: waiting for the engine's thread, agreeing with the other
// ranks, and running (fused or alone; the fusion buffer's copies show as their own events). The
// run carries the error of a request that failed.
void recordRequest(const LocalRequest& request, Clock::time_point finished,
                   const std::string& failure) {
  recordPhase(request, "queue", kQueueLane, request.submittedAt, request.adoptedAt);
  recordPhase(request, "negotiate", kNegotiationLane, request.adoptedAt, request.agreedAt);
  recordPhase(request, "run", kRunLane, request.agreedAt, finished, failure);
}

}  // namespace

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
    failEverything(hoopInternalError, std::string("training engine: ") + e.what());
  }
}

void Engine::Impl::adoptIncoming() {
  std::vector<LocalRequest> arrived;
  {
    std::lock_guard lock(mutex);
    arrived.swap(incoming);
  }
  const Clock::time_point now = Clock::now();
  for (LocalRequest& request : arrived) {
    request.adoptedAt = now;
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

  // See coordinator.h for the layout; every byte is reduced with hoopMin across ranks.
  std::vector<uint8_t> control(layout.total, 1);
  for (int r = 0; r < nranks; ++r) {
    control[ControlLayout::kRankStatus + static_cast<size_t>(r)] = kNotMine;
  }
  control[ControlLayout::kRankStatus + static_cast<size_t>(rank)] =
      stopVote ? kStopping : (joinVote ? kJoined : kActive);
  joinVote = joinVote && !stopVote;
  for (size_t slot = 0; slot < coordinator.cacheSize(); ++slot) {
    control[layout.cache + slot] = joinVote ? kJoinedWithout : kMissing;
  }
  // A cached request that has waited half the stall time goes by name, so the stall check (which
  // watches names under negotiation) sees it too.
  const bool stallChecks = options.stallTimeoutSeconds > 0;
  const Clock::duration stallWarning = seconds(options.stallTimeoutSeconds / 2);
  std::vector<Announcement> announce;
  for (LocalRequest& request : pending) {
    if (request.announcedByName) continue;
    const auto slot = coordinator.cacheSlot(request.name, request.shape);
    const bool waitedLong = stallChecks && now - request.submittedAt >= stallWarning;
    if (slot && !waitedLong) {
      control[layout.cache + *slot] = kHas;
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
                    std::string("training engine negotiation failed: ") + hoopGetLastError(comm));
  }
  const bool byName = control[ControlLayout::kNothingToAnnounce] == 0;
  std::vector<std::vector<Announcement>> announcements;
  if (byName) announcements = exchange(announce);

  const CycleOutcome outcome = coordinator.decide(control, announcements, now);
  for (const Response& response : outcome.responses) warnedStalls.erase(response.name);
  const Clock::time_point agreedAt = Clock::now();

  ExecutionCounters counters;
  size_t finishedOk = 0;
  size_t finishedFailed = 0;
  executor.run(
      outcome.responses,
      [&](const std::string& name) -> LocalRequest* {
        auto found = pendingByName.find(name);
        if (found == pendingByName.end()) return nullptr;
        found->second->agreedAt = agreedAt;
        return &*found->second;
      },
      [&](LocalRequest& request, hoopResult_t code, const std::string& message) {
        ++(code == hoopSuccess ? finishedOk : finishedFailed);
        if (timelineOn()) recordRequest(request, Clock::now(), message);
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
    stats.largestFusedBytes = std::max(stats.largestFusedBytes, counters.largestFusedBytes);
    stats.completedRequests += finishedOk;
    stats.failedRequests += finishedFailed;
  }
  deliverCompletions();
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
  if (options.stallTimeoutSeconds <= 0) return;  // checks turned off
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
      throw Exception(
          result, std::string("training engine name exchange failed: ") + hoopGetLastError(comm));
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
  completions.push_back({request.handle, code, message.empty() ? message : prefix() + message});
  auto found = pendingByName.find(request.name);
  if (found != pendingByName.end()) {
    pending.erase(found->second);
    pendingByName.erase(found);
  }
}

void Engine::Impl::deliverCompletions() {
  handles.completeAll(completions);
  completions.clear();
}

void Engine::Impl::completeJoin(const CycleOutcome& outcome) {
  if (!outcome.allJoined) {
    previouslyJoined = outcome.joined;
    return;
  }
  // The last to join: the highest of the ranks that joined in this cycle (or, when every joined
  // rank had joined before and a stopping rank completed the join, the highest joined rank).
  int last = -1;
  int highestJoined = -1;
  for (int r = nranks - 1; r >= 0 && last < 0; --r) {
    const auto index = static_cast<size_t>(r);
    if (!outcome.joined[index]) continue;
    if (highestJoined < 0) highestJoined = r;
    if (!previouslyJoined[index]) last = r;
  }
  if (last < 0) last = highestJoined;
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
  deliverCompletions();  // what finished before the failure still succeeded
  adoptIncoming();
  size_t failed = 0;
  while (!pending.empty()) {
    LocalRequest& request = pending.front();
    const std::string text = prefix() + kindName(request.shape.kind) + " of tensor '" +
                             request.name + "' did not complete: " + message;
    // Failed before the ranks agreed to run it, or while it ran: one event from its submission.
    if (timelineOn()) {
      recordPhase(request, "failed", kRunLane, request.submittedAt, Clock::now(), text);
    }
    handles.complete(request.handle, code, text);
    pendingByName.erase(request.name);
    pending.pop_front();
    ++failed;
  }
  std::lock_guard lock(mutex);
  stats.failedRequests += failed;
}

}  // namespace hoop::train
