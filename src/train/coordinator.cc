#include "train/coordinator.h"

#include <algorithm>
#include <sstream>

namespace hoop::train {
namespace {

// "1, 3" for the ranks whose flag equals `wanted`.
std::string rankList(const std::vector<bool>& flags, bool wanted) {
  std::ostringstream out;
  bool first = true;
  for (size_t r = 0; r < flags.size(); ++r) {
    if (flags[r] != wanted) continue;
    out << (first ? "" : ", ") << r;
    first = false;
  }
  return out.str();
}

// A negotiation exists because some rank announced it, so one shape is always there.
const RequestShape& firstShape(const Negotiation& negotiation) {
  for (const auto& shape : negotiation.shapes) {
    if (shape.has_value()) return *shape;
  }
  return negotiation.shapes.front().value();
}

}  // namespace

Coordinator::Coordinator(int nranks, size_t cacheCapacity, double stallTimeoutSeconds)
    : nranks_(nranks), cacheCapacity_(cacheCapacity), stallTimeoutSeconds_(stallTimeoutSeconds) {}

ControlLayout Coordinator::layout() const {
  ControlLayout layout;
  layout.cache = ControlLayout::kRankStatus + static_cast<size_t>(nranks_);
  layout.negotiations = layout.cache + cache_.size();
  layout.total = layout.negotiations + negotiations_.size();
  return layout;
}

std::optional<size_t> Coordinator::cacheSlot(const std::string& name,
                                             const RequestShape& shape) const {
  auto slot = cacheSlots_.find(name);
  if (slot == cacheSlots_.end() || !(cache_[slot->second].shape == shape)) return std::nullopt;
  if (negotiationSlots_.count(name) != 0) return std::nullopt;
  return slot->second;
}

CycleOutcome Coordinator::decide(std::span<const uint8_t> control,
                                 const std::vector<std::vector<Announcement>>& announcements,
                                 std::chrono::steady_clock::time_point now) {
  const ControlLayout before = layout();
  CycleOutcome outcome;
  const std::span<const uint8_t> status =
      control.subspan(ControlLayout::kRankStatus, static_cast<size_t>(nranks_));
  outcome.joined.resize(status.size());
  for (size_t r = 0; r < status.size(); ++r) outcome.joined[r] = status[r] == kJoined;
  auto all = [&](auto predicate) { return std::all_of(status.begin(), status.end(), predicate); };
  outcome.shuttingDown = all([](uint8_t s) { return s == kStopping; });
  outcome.allJoined = all([](uint8_t s) { return s != kActive; }) &&
                      std::find(status.begin(), status.end(), kJoined) != status.end();

  // Cached names first, in slot order: the cheap path of the steady state.
  for (size_t slot = 0; slot < cache_.size(); ++slot) {
    if (control[before.cache + slot] == kHas) {
      Response response;
      response.name = cache_[slot].name;
      response.shape = cache_[slot].shape;
      response.fromCache = true;
      outcome.responses.push_back(std::move(response));
    }
  }

  // Stall votes refer to the negotiations as they stood before this cycle's announcements.
  std::vector<bool> stalled(negotiations_.size());
  for (size_t i = 0; i < stalled.size(); ++i) stalled[i] = control[before.negotiations + i] == 0;

  for (size_t r = 0; r < announcements.size(); ++r) {
    for (const Announcement& a : announcements[r]) addAnnouncement(static_cast<int>(r), a, now);
  }

  std::vector<Negotiation> waiting;
  for (size_t i = 0; i < negotiations_.size(); ++i) {
    Negotiation& n = negotiations_[i];
    bool complete = true;
    for (size_t r = 0; r < n.shapes.size(); ++r) {
      complete = complete && (n.shapes[r].has_value() || outcome.joined[r]);
    }
    if (complete) {
      Response response = settle(n, outcome.joined);
      if (response.errorCode == hoopSuccess && !countIsPerRank(response.shape.kind)) {
        remember(response.name, response.shape);
      }
      outcome.responses.push_back(std::move(response));
    } else if (i < stalled.size() && stalled[i]) {
      Response response;
      response.name = n.name;
      response.shape = firstShape(n);
      response.errorCode = hoopTimeout;
      response.error = stallError(n);
      outcome.responses.push_back(std::move(response));
    } else {
      waiting.push_back(std::move(n));
    }
  }
  negotiations_ = std::move(waiting);
  negotiationSlots_.clear();
  for (size_t i = 0; i < negotiations_.size(); ++i) negotiationSlots_[negotiations_[i].name] = i;
  ++cycle_;
  return outcome;
}

void Coordinator::addAnnouncement(int rank, const Announcement& announcement,
                                  std::chrono::steady_clock::time_point now) {
  auto [slot, isNew] = negotiationSlots_.try_emplace(announcement.name, negotiations_.size());
  if (isNew) {
    Negotiation n;
    n.name = announcement.name;
    n.shapes.resize(static_cast<size_t>(nranks_));
    n.firstCycle = cycle_;
    n.createdAt = now;
    negotiations_.push_back(std::move(n));
  }
  negotiations_[slot->second].shapes[static_cast<size_t>(rank)] = announcement.shape;
}

Response Coordinator::settle(const Negotiation& negotiation,
                             const std::vector<bool>& joined) const {
  Response response;
  response.name = negotiation.name;
  const RequestShape* agreed = nullptr;
  bool mismatch = false;
  for (const auto& shape : negotiation.shapes) {
    if (!shape.has_value()) continue;
    if (agreed == nullptr) {
      agreed = &*shape;
    } else if (!sameRequest(*agreed, *shape)) {
      mismatch = true;
    }
  }
  response.shape = *agreed;

  if (mismatch) {
    std::ostringstream text;
    text << "tensor '" << negotiation.name << "' was submitted with different shapes:";
    for (size_t r = 0; r < negotiation.shapes.size(); ++r) {
      if (negotiation.shapes[r])
        text << " rank " << r << ": " << describe(*negotiation.shapes[r]) << ";";
    }
    text << " every rank must submit a name with the same kind, type, count and operation";
    response.errorCode = hoopInvalidUsage;
    response.error = text.str();
    return response;
  }

  if (agreed->kind == RequestKind::kAllGather) {
    for (size_t r = 0; r < negotiation.shapes.size(); ++r) {
      response.perRankCounts.push_back(negotiation.shapes[r] ? negotiation.shapes[r]->count : 0);
    }
  }
  if (agreed->kind == RequestKind::kBroadcast) {
    const auto root = static_cast<size_t>(agreed->root);
    if (agreed->root < 0 || root >= negotiation.shapes.size()) {
      response.errorCode = hoopInvalidArgument;
      response.error = "broadcast of tensor '" + negotiation.name + "' names root " +
                       std::to_string(agreed->root) + ", outside 0.." +
                       std::to_string(negotiation.shapes.size() - 1);
    } else if (!negotiation.shapes[root] && joined[root]) {
      response.errorCode = hoopInvalidUsage;
      response.error = "broadcast of tensor '" + negotiation.name + "' from root rank " +
                       std::to_string(root) + ", which joined without submitting it";
    }
  }
  return response;
}

std::string Coordinator::stallError(const Negotiation& negotiation) const {
  std::vector<bool> present(negotiation.shapes.size());
  for (size_t r = 0; r < present.size(); ++r) present[r] = negotiation.shapes[r].has_value();
  const RequestShape& shape = firstShape(negotiation);
  std::ostringstream text;
  text << kindName(shape.kind) << " of tensor '" << negotiation.name << "' stalled: rank(s) "
       << rankList(present, false) << " did not submit it within " << stallTimeoutSeconds_
       << " s while rank(s) " << rankList(present, true)
       << " did (HOOP_STALL_CHECK_TIME sets the limit)";
  return text.str();
}

void Coordinator::remember(const std::string& name, const RequestShape& shape) {
  if (auto slot = cacheSlots_.find(name); slot != cacheSlots_.end()) {
    cache_[slot->second].shape = shape;
    return;
  }
  if (cache_.size() >= cacheCapacity_) return;
  cacheSlots_.emplace(name, cache_.size());
  cache_.push_back({name, shape});
}

}  // namespace hoop::train
