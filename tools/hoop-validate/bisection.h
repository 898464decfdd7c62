// Which host makes a whole-job allreduce fail or go wrong, found by halving. A failed
// communicator cannot be split any more, so the communicators the halving needs are split at the
// start, while the job is healthy: each one is the anchor (rank 0's host) with the hosts of one
// node of a binary tree over the other hosts. When a whole-job check fails or gives a wrong
// result, both halves of the suspects are tested at once, each with the anchor, by an allreduce
// on its own communicator that is bounded by that communicator's time-out; the half that fails
// is halved again until one host is left. Every test includes the anchor, so rank 0 sees every
// outcome and reports the steps; each other rank sees its own half's, which is all it needs: the
// ranks of a half that passed are cleared and stop, those of a failing half go on to its halves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hoop/hoop.h"
#include "plan.h"

namespace hoop::validate {

// A node of the tree: the anchor (host 0) and the hosts first..last (inclusive), with its two
// halves (-1 for a single host).
struct BisectionNode {
  int first = 1;
  int last = 1;
  int left = -1;
  int right = -1;

  bool holds(int host) const { return host == 0 || (host >= first && host <= last); }
};

// The tree over hosts 1..hosts-1, the root first (children after their parent); empty with
// fewer than three hosts, where there is nothing to halve.
std::vector<BisectionNode> bisectionTree(int hosts);

struct BisectionResult {
  std::vector<std::string> steps;  // what each halving found, on the anchor's ranks
  int blamedHost = -1;             // the host left at the end; -1 when no single host is
};

class Bisection {
 public:
  // Collective over world (every rank, while it is healthy): splits one communicator per node
  // below the root, each bounded by `timeoutSeconds` per operation.
  Bisection(hoopComm_t world, const Layout& layout, int timeoutSeconds);
  ~Bisection();
  Bisection(const Bisection&) = delete;
  Bisection& operator=(const Bisection&) = delete;

  bool possible() const { return !tree_.empty(); }
  // The longest this rank's part of run() can take: a test per level, each at most two
  // operations bounded by the time-out.
  double worstSeconds() const;
  // On every rank, at the same point: halves the hosts with allreduces of `count` int32 until
  // one host is left. Never throws: a test that fails is an outcome.
  BisectionResult run(size_t count);

 private:
  const Layout& layout_;
  int self_ = 0;
  int timeoutSeconds_ = 0;
  std::vector<BisectionNode> tree_;
  std::vector<hoopComm_t> comms_;  // by node; null where this rank is not a member (and root)
  std::vector<uint8_t> failed_;    // by node: its communicator failed (aborted, not destroyed)
};

}  // namespace hoop::validate
