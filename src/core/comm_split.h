// hoopCommSplit's exchange over the parent communicator. Every rank brings its color and key; the
// ranks of one color form a new communicator, ranked by key (ties by parent rank), and the first
// of them in parent order serves its rendezvous: it makes a fresh id (its own secret and job tag)
// and the exchange hands it to the others. The new communicators are then made as any other
// (Communicator::create), each group on its own, over the parent's reachable addresses.
//
// The exchange is two allgathers on the parent, run as one of its operations, so it is bounded by
// the parent's HOOP_TIMEOUT: a rank that never calls hoopCommSplit times the others out, naming
// the operation, as any collective it skipped would. Each rank's record carries a tag, so a peer
// that made another call of the same shape is named instead of read as a split.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap.h"

namespace hoop {

class Communicator;

// The color that leaves a rank out of every new communicator (HOOP_SPLIT_NOCOLOR).
inline constexpr int kNoColor = -1;

// Why a rank refuses to split: its own arguments are wrong. It still takes part in the exchange,
// so every rank fails at once naming it, and the parent stays usable.
enum class SplitRefusal : int32_t {
  kNone = 0,
  kNoOutput = 1,   // newcomm was NULL
  kBadColor = 2,   // a color below kNoColor
  kBadConfig = 3,  // the config could not be read
};

struct SplitRequest {
  int color = kNoColor;
  int key = 0;
  SplitRefusal refusal = SplitRefusal::kNone;
  // How long the rendezvous this rank may serve waits for its group (the new communicator's
  // HOOP_INIT_TIMEOUT).
  std::chrono::milliseconds rendezvousTimeout{300'000};
};

// What the exchange decided for this rank.
struct SplitPlan {
  // Each rank that refused, named with its reason; empty when none did. Then no communicator is
  // made, by any rank.
  std::string refusals;
  bool member = false;  // false: this rank's color was kNoColor
  // The new communicator: its id, this rank's place and its size, and its ranks as parent ranks
  // in the new order.
  BootstrapId id;
  int rank = -1;
  int size = 0;
  std::vector<int> parentRanks;
  // On the first member in parent order: the rendezvous it serves, until the new communicator's
  // creation ends it.
  std::unique_ptr<RootService> root;
};

// Collective over `parent`: every rank calls it once, from one of the parent's operations.
// Throws on a mismatched call (hoopInvalidUsage, naming the peer) or a failed exchange.
SplitPlan planSplit(Communicator& parent, const SplitRequest& request);

}  // namespace hoop
