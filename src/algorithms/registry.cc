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
    {OpKind::kAllReduce, ScheduleId::kRing, "ring", ringAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kDirect, "direct", directAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kOneShot, "one-shot (shared memory)", oneShotAllReduce,
     oneShotFits, kOneShotServes},
    {OpKind::kAllReduce, ScheduleId::kTwoShot, "two-shot", twoShotAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kRecursiveDoubling, "recursive doubling",
     recursiveDoublingAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kRabenseifner, "Rabenseifner", rabenseifnerAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kTree, "double binary tree", doubleTreeAllReduce, nullptr},
    {OpKind::kAllReduce, ScheduleId::kHierarchical, "hierarchical", hierarchicalAllReduce,
     hierarchyFits, kHierarchyServes},
    {OpKind::kAllGather, ScheduleId::kRing, "ring", ringAllGather, nullptr},
    {OpKind::kAllGather, ScheduleId::kBruck, "Bruck", bruckAllGather, nullptr},
    {OpKind::kAllGather, ScheduleId::kHierarchical, "hierarchical", hierarchicalAllGather,
     hierarchyFits, kHierarchyServes},
    {OpKind::kReduceScatter, ScheduleId::kRing, "ring", ringReduceScatter, nullptr},
    {OpKind::kBroadcast, ScheduleId::kRing, "pipelined chain", chainBroadcast, nullptr},
    {OpKind::kBroadcast, ScheduleId::kTree, "pipelined binary tree", treeBroadcast, nullptr},
    {OpKind::kBroadcast, ScheduleId::kHierarchical, "hierarchical chains", hierarchicalBroadcast,
     hierarchyFits, kHierarchyServes},
    {OpKind::kReduce, ScheduleId::kRing, "pipelined chain", chainReduce, nullptr},
    {OpKind::kReduce, ScheduleId::kTree, "pipelined binary tree", treeReduce, nullptr},
    {OpKind::kAllToAll, ScheduleId::kPairwise, "pairwise exchange", pairwiseAllToAll, nullptr},
};

// No collective has an id twice: the id alone stands for the entry.
constexpr bool idsAreUniquePerCollective() {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    for (const AlgorithmEntry& other : kAlgorithms) {
      if (&other != &entry && other.kind == entry.kind && other.id == entry.id) return false;
    }
  }
  return true;
}
static_assert(idsAreUniquePerCollective());

}  // namespace

std::span<const AlgorithmEntry> algorithmRegistry() { return kAlgorithms; }

const AlgorithmEntry* findAlgorithm(OpKind kind, std::string_view name) {
  for (const AlgorithmEntry& entry : kAlgorithms) {
    if (entry.kind == kind && entry.name() == name) return &entry;
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
