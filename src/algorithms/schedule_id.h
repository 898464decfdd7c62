// Which schedule, as the cost model, the dispatcher and the trial refer to it: a stable id rather
// than its HOOP_ALGO spelling, so that no decision rests on comparing strings. A schedule is one
// (collective, id) pair of the registry (registry.h); one id names the same family across
// collectives ("ring" is the ring allreduce and the pipelined chain of a broadcast).
#pragma once

#include <cstdint>
#include <string_view>

namespace hoop {

enum class ScheduleId : uint8_t {
  kRing,
  kDirect,
  kOneShot,
  kTwoShot,
  kRecursiveDoubling,
  kRabenseifner,
  kTree,
  kHierarchical,
  kBruck,
  kPairwise,
};

// The id's HOOP_ALGO spelling, for parsing and printing only (the registry checks at compile
// time that each entry's name is its id's).
constexpr std::string_view scheduleName(ScheduleId id) {
  switch (id) {
    case ScheduleId::kRing: return "ring";
    case ScheduleId::kDirect: return "direct";
    case ScheduleId::kOneShot: return "oneshot";
    case ScheduleId::kTwoShot: return "twoshot";
    case ScheduleId::kRecursiveDoubling: return "recdoubling";
    case ScheduleId::kRabenseifner: return "rabenseifner";
    case ScheduleId::kTree: return "tree";
    case ScheduleId::kHierarchical: return "hierarchical";
    case ScheduleId::kBruck: return "bruck";
    case ScheduleId::kPairwise: return "pairwise";
  }
  return "";
}

}  // namespace hoop
