// The halving of a failing or wrong whole-job allreduce over communicators split in advance
// (bisection.h).
#include "bisection.h"

#include <algorithm>
#include <thread>

#include "base/error.h"
#include "collective_check.h"
#include "measure.h"

namespace hoop::validate {

namespace {

enum class Outcome { kRight, kWrong, kFailed };

struct Test {
  Outcome outcome = Outcome::kRight;
  std::string error;  // kFailed: the first line of the error
};

int buildTree(std::vector<BisectionNode>& tree, int first, int last) {
  const int index = static_cast<int>(tree.size());
  tree.push_back(BisectionNode{.first = first, .last = last});
  if (first < last) {
    const int middle = first + (last - first) / 2;
    const int left = buildTree(tree, first, middle);
    const int right = buildTree(tree, middle + 1, last);
    tree[static_cast<size_t>(index)].left = left;
    tree[static_cast<size_t>(index)].right = right;
  }
  return index;
}

int depthOf(const std::vector<BisectionNode>& tree, int node) {
  const BisectionNode& n = tree[static_cast<size_t>(node)];
  if (n.left < 0) return 0;
  return 1 + std::max(depthOf(tree, n.left), depthOf(tree, n.right));
}

std::string describe(const Layout& layout, const BisectionNode& node) {
  std::string hosts;
  for (int host = node.first; host <= node.last; ++host) {
    hosts += (hosts.empty() ? "" : ",") + layout.hostNames[static_cast<size_t>(host)];
  }
  return "{" + layout.hostNames[0] + " + " + hosts + "}";
}

std::string describe(const Test& test) {
  switch (test.outcome) {
    case Outcome::kRight: return "right";
    case Outcome::kWrong: return "wrong";
    case Outcome::kFailed: return "failed (" + test.error + ")";
  }
  return "?";
}

}  // namespace

std::vector<BisectionNode> bisectionTree(int hosts) {
  std::vector<BisectionNode> tree;
  if (hosts >= 3) buildTree(tree, 1, hosts - 1);
  return tree;
}

Bisection::Bisection(hoopComm_t world, const Layout& layout, int timeoutSeconds)
    : layout_(layout), timeoutSeconds_(timeoutSeconds), tree_(bisectionTree(layout.hosts())) {
  check(world, hoopCommUserRank(world, &self_), "rank");
  comms_.assign(tree_.size(), nullptr);
  failed_.assign(tree_.size(), false);
  const int myHost = layout_.hostOf[static_cast<size_t>(self_)];
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  // The root is the whole job, which has just failed when this is used: only its halves.
  for (size_t node = 1; node < tree_.size(); ++node) {
    const int color = tree_[node].holds(myHost) ? 0 : HOOP_SPLIT_NOCOLOR;
    check(world, hoopCommSplit(world, color, self_, &comms_[node], &config),
          "splitting the communicators of the bisection");
  }
}

Bisection::~Bisection() {
  for (size_t node = 0; node < comms_.size(); ++node) {
    if (comms_[node] == nullptr) continue;
    if (failed_[node]) {
      hoopCommAbort(comms_[node]);
    } else {
      hoopCommDestroy(comms_[node]);
    }
  }
}

double Bisection::worstSeconds() const {
  if (tree_.empty()) return 0;
  return depthOf(tree_, 0) * 2.0 * timeoutSeconds_;
}

BisectionResult Bisection::run(size_t count) {
  BisectionResult result;
  if (tree_.empty()) return result;
  const int myHost = layout_.hostOf[static_cast<size_t>(self_)];
  const bool anchor = myHost == 0;
  std::vector<Test> tests(tree_.size());
  // One test: the allreduce of the node's communicator, checked exactly.
  auto test = [&](int node) {
    Test& outcome = tests[static_cast<size_t>(node)];
    std::vector<int> members;
    for (int host = 0; host < layout_.hosts(); ++host) {
      if (!tree_[static_cast<size_t>(node)].holds(host)) continue;
      for (int rank : layout_.hostRanks[static_cast<size_t>(host)]) members.push_back(rank);
    }
    std::sort(members.begin(), members.end());
    try {
      double seconds = 0;
      const bool wrong =
          allreduceWrong(comms_[static_cast<size_t>(node)], self_, members, count, seconds) != 0;
      outcome.outcome = wrong ? Outcome::kWrong : Outcome::kRight;
    } catch (const std::exception& error) {
      outcome.outcome = Outcome::kFailed;
      const std::string message = error.what();
      outcome.error = message.substr(0, message.find('\n'));
      failed_[static_cast<size_t>(node)] = true;
    }
  };
  int node = 0;
  while (tree_[static_cast<size_t>(node)].left >= 0) {
    const int left = tree_[static_cast<size_t>(node)].left;
    const int right = tree_[static_cast<size_t>(node)].right;
    if (!anchor) {
      // This rank is in one half: it goes on only while its half keeps failing.
      const int mine = tree_[static_cast<size_t>(left)].holds(myHost) ? left : right;
      test(mine);
      if (tests[static_cast<size_t>(mine)].outcome == Outcome::kRight) return result;
      node = mine;
      continue;
    }
    // Both halves at once, each on its own communicator: a half whose test waits out the
    // time-out does not hold up the other's.
    std::thread other(test, right);
    test(left);
    other.join();
    const Test& l = tests[static_cast<size_t>(left)];
    const Test& r = tests[static_cast<size_t>(right)];
    result.steps.push_back(
        str(describe(layout_, tree_[static_cast<size_t>(left)]), ": ", describe(l), "; ",
            describe(layout_, tree_[static_cast<size_t>(right)]), ": ", describe(r)));
    const bool leftBad = l.outcome != Outcome::kRight;
    const bool rightBad = r.outcome != Outcome::kRight;
    if (leftBad && rightBad) {
      // What both groups share is the anchor.
      result.steps.push_back(
          str("both halves failed with ", layout_.hostNames[0], ", the host they share"));
      result.blamedHost = 0;
      return result;
    }
    if (!leftBad && !rightBad) {
      result.steps.push_back("both halves passed: no single host fails it");
      return result;
    }
    node = leftBad ? left : right;
  }
  result.blamedHost = tree_[static_cast<size_t>(node)].first;
  return result;
}

}  // namespace hoop::validate
