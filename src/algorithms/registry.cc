#include "algorithms/registry.h"

#include "algorithms/team.h"

namespace hoop {

bool hierarchyFits(const Team& comm, const CollectiveArgs& /*args*/) {
  return comm.hostCount() > 1 && comm.localRing().size() > 1;
}

namespace {

constexpr std::string_view kOneShotServes =
    "calls of up to 8 KiB on up to 8 ranks that all reach each other over shared memory";
static_assert(kOneShotMaxBytes == 8192 && kOneShotMaxRanks == 8,
              "kOneShotServes must say what oneShotFits accepts");
constexpr std::string_view kHierarchyServes =
    "communicators of several hosts with the same number (two or more) of ranks on each";

// logName is passed on as a C string: every one is a literal.
constexpr AlgorithmEntry kAlgorithms[] = {
    {OpKind::kAllReduce, "ring", "ring", ringAllReduce, nullptr},
    {OpKind::kAllReduce, "direct", "direct", directAllReduce, nullptr},
    {OpKind::kAllReduce, "oneshot", "one-shot (shared memory)", oneShotAllReduce, oneShotFits,
     kOneShotServes},
    {OpKind::kAllReduce, "twoshot", "two-shot", twoShotAllReduce, nullptr},
    {OpKind::kAllReduce, "recdoubling", "recursive doubling", recursiveDoublingAllReduce, nullptr},
    {OpKind::kAllReduce, "rabenseifner", "Rabenseifner", rabenseifnerAllReduce, nullptr},
    {OpKind::kAllReduce, "tree", "double binary tree", doubleTreeAllReduce, nullptr},
    {OpKind::kAllReduce, "hierarchical", "hierarchical", hierarchicalAllReduce, hierarchyFits,
     kHierarchyServes},
    {OpKind::kAllGather, "ring", "ring", ringAllGather, nullptr},
    {OpKind::kAllGather, "bruck", "Bruck", bruckAllGather, nullptr},
    {OpKind::kAllGather, "hierarchical", "hierarchical", hierarchicalAllGather, hierarchyFits,
     kHierarchyServes},
    {OpKind::kReduceScatter, "ring", "ring", ringReduceScatter, nullptr},
    {OpKind::kBroadcast, "ring", "pipelined chain", chainBroadcast, nullptr},
    {OpKind::kBroadcast, "tree", "pipelined binary tree", treeBroadcast, nullptr},
    {OpKind::kBroadcast, "hierarchical", "hierarchical chains", hierarchicalBroadcast,
     hierarchyFits, kHierarchyServes},
    {OpKind::kReduce, "ring", "pipelined chain", chainReduce, nullptr},
    {OpKind::kReduce, "tree", "pipelined binary tree", treeReduce, nullptr},
    {OpKind::kAllToAll, "pairwise", "pairwise exchange", pairwiseAllToAll, nullptr},
};

}  // namespace

std::span<const AlgorithmEntry> algorithmRegistry() { return kAlgorithms; }

const AlgorithmEntry* findAlgorithm(OpKind kind, std::string_view name) {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    if (entry.kind == kind && entry.name == name) return &entry;
  }
  return nullptr;
}

}  // namespace hoop
