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
    {OpKind::kAllReduce, ScheduleId::kRing, "ring", "ring", ringAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kDirect, "direct", "direct", directAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kOneShot, "oneshot", "one-shot (shared memory)",
     oneShotAllReduce, oneShotFits, kOneShotServes},
    {OpKind::kAllReduce, ScheduleId::kTwoShot, "twoshot", "two-shot", twoShotAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kRecursiveDoubling, "recdoubling", "recursive doubling",
     recursiveDoublingAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kRabenseifner, "rabenseifner", "Rabenseifner",
     rabenseifnerAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kTree, "tree", "double binary tree", doubleTreeAllReduce,
     nullptr},
    {OpKind::kAllReduce, ScheduleId::kHierarchical, "hierarchical", "hierarchical",
     hierarchicalAllReduce, hierarchyFits, kHierarchyServes},
    {OpKind::kAllGather, ScheduleId::kRing, "ring", "ring", ringAllGather, nullptr},
    {OpKind::kAllGather, ScheduleId::kBruck, "bruck", "Bruck", bruckAllGather, nullptr},
    {OpKind::kAllGather, ScheduleId::kHierarchical, "hierarchical", "hierarchical",
     hierarchicalAllGather, hierarchyFits, kHierarchyServes},
    {OpKind::kReduceScatter, ScheduleId::kRing, "ring", "ring", ringReduceScatter, nullptr},
    {OpKind::kBroadcast, ScheduleId::kRing, "ring", "pipelined chain", chainBroadcast, nullptr},
    {OpKind::kBroadcast, ScheduleId::kTree, "tree", "pipelined binary tree", treeBroadcast,
     nullptr},
    {OpKind::kBroadcast, ScheduleId::kHierarchical, "hierarchical", "hierarchical chains",
     hierarchicalBroadcast, hierarchyFits, kHierarchyServes},
    {OpKind::kReduce, ScheduleId::kRing, "ring", "pipelined chain", chainReduce, nullptr},
    {OpKind::kReduce, ScheduleId::kTree, "tree", "pipelined binary tree", treeReduce, nullptr},
    {OpKind::kAllToAll, ScheduleId::kPairwise, "pairwise", "pairwise exchange", pairwiseAllToAll,
     nullptr},
};

// Each entry's HOOP_ALGO name is its id's, and no collective has an id twice: the id alone
// stands for the entry.
constexpr bool namesAndIdsAgree() {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    if (entry.name != scheduleName(entry.id)) return false;
    for (const AlgorithmEntry& other : kAlgorithms) {
      if (&other != &entry && other.kind == entry.kind && other.id == entry.id) return false;
    }
  }
  return true;
}
static_assert(namesAndIdsAgree());

}  // namespace

std::span<const AlgorithmEntry> algorithmRegistry() { return kAlgorithms; }

const AlgorithmEntry* findAlgorithm(OpKind kind, std::string_view name) {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    if (entry.kind == kind && entry.name == name) return &entry;
  }
  return nullptr;
}

const AlgorithmEntry* findAlgorithm(OpKind kind, ScheduleId id) {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    if (entry.kind == kind && entry.id == id) return &entry;
  }
  return nullptr;
}

}  // namespace hoop
