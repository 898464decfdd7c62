// The negotiation state every rank keeps an identical copy of: the response cache and the names
// still waiting for some rank. Each cycle, every rank feeds decide() the same inputs (the
// min-reduced control bytes and every rank's announcements), so every rank reaches the same
// responses in the same order without a coordinator rank; that order is what keeps ranks that
// submit names in different orders from deadlocking.
//
// The control bytes are reduced with hoopMin (for 0/1 bytes, an AND over ranks):
//   [0]                     1 when this rank announces nothing by name this cycle
//   [1, 1 + n)              byte r: rank r's RankStatus (other ranks write 255, so the minimum
//                           is rank r's own value)
//   cache, 1 per entry      a CacheVote: the minimum is kHas exactly when every rank has the
//                           request or joined, and some rank really has it (so ranks that all
//                           joined do not run names nobody submitted)
//   negotiations, 1 each    0 when this rank considers that name stalled
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "train/announcement.h"
#include "train/request_shape.h"

namespace hoop::train {

enum CacheVote : uint8_t { kMissing = 0, kHas = 1, kJoinedWithout = 2 };

// A rank that is stopping (its engine's destructor started) lets others finish a join, but takes
// part in nothing it did not submit: names it never submits stall on the others, they do not
// silently get its zeros.
enum RankStatus : uint8_t { kActive = 0, kJoined = 1, kStopping = 2, kNotMine = 255 };

struct ControlLayout {
  static constexpr size_t kNothingToAnnounce = 0;
  static constexpr size_t kRankStatus = 1;
  size_t cache = 0;         // first byte of the cache section
  size_t negotiations = 0;  // first byte of the stall votes
  size_t total = 0;
};

// What a cycle decided for one name, the same on every rank.
struct Response {
  std::string name;
  RequestShape shape;                 // the agreed shape (allgather: count is meaningless)
  std::vector<size_t> perRankCounts;  // allgather only: each rank's elements (0 for joined ranks)
  bool fromCache = false;
  hoopResult_t errorCode = hoopSuccess;
  std::string error;  // non-empty: the request fails on every rank that submitted it
};

// A name some ranks announced and others have not yet.
struct Negotiation {
  std::string name;
  std::vector<std::optional<RequestShape>> shapes;  // per rank
  uint64_t firstCycle = 0;
  std::chrono::steady_clock::time_point createdAt;  // this rank's clock: for stall votes only
};

struct CycleOutcome {
  std::vector<Response> responses;  // to run in this order on every rank
  std::vector<bool> joined;         // per rank, as of this cycle
  bool allJoined = false;           // no rank is active and at least one joined
  bool shuttingDown = false;        // every rank's engine is shutting down
};

class Coordinator {
 public:
  Coordinator(int nranks, size_t cacheCapacity, double stallTimeoutSeconds);

  ControlLayout layout() const;
  // The cache slot that can stand for this request: the name is cached with this exact shape and
  // is not being negotiated by name.
  std::optional<size_t> cacheSlot(const std::string& name, const RequestShape& shape) const;
  const std::vector<Negotiation>& negotiations() const { return negotiations_; }
  size_t cacheSize() const { return cache_.size(); }

  // control: the reduced bytes, laid out by layout() as it was before this call.
  // announcements: per rank, in rank order (empty when nobody announced).
  CycleOutcome decide(std::span<const uint8_t> control,
                      const std::vector<std::vector<Announcement>>& announcements,
                      std::chrono::steady_clock::time_point now);

 private:
  struct CacheEntry {
    std::string name;
    RequestShape shape;
  };
  void addAnnouncement(int rank, const Announcement& announcement,
                       std::chrono::steady_clock::time_point now);
  Response settle(const Negotiation& negotiation, const std::vector<bool>& joined) const;
  std::string stallError(const Negotiation& negotiation) const;
  void remember(const std::string& name, const RequestShape& shape);

  int nranks_;
  size_t cacheCapacity_;
  double stallTimeoutSeconds_;
  uint64_t cycle_ = 0;
  std::vector<CacheEntry> cache_;
  std::unordered_map<std::string, size_t> cacheSlots_;
  std::vector<Negotiation> negotiations_;  // in the order names first appeared
  // Index of negotiations_ by name (models have hundreds of gradients announced at once).
  std::unordered_map<std::string, size_t> negotiationSlots_;
};

}  // namespace hoop::train
