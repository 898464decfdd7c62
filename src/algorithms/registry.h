// Every schedule hoop has, by collective: its id (schedule_id.h), which everything that decides
// keys on; the name HOOP_ALGO uses for it, the name logs and hoop-perf show, and which calls it can
// serve. The dispatcher and the HOOP_ALGO parser both
// read this one table, so a schedule exists for both or for neither.
#pragma once

#include <span>
#include <string_view>

#include "algorithms/collective.h"
#include "algorithms/schedule_id.h"

namespace hoop {

struct AlgorithmEntry {
  OpKind kind;
  ScheduleId id;
  std::string_view logName;  // as the INFO log and hoop-perf print it: "pipelined chain"
  void (*run)(Team&, const CollectiveArgs&);
  // Whether it can serve this call on this communicator (the same answer on every rank);
  // nullptr: every call.
  bool (*fits)(const Team&, const CollectiveArgs&);
  // The calls `fits` accepts, in words, for the warning when a forced rule names it for others.
  std::string_view servesOnly = {};

  // As HOOP_ALGO spells it: "ring". A literal, so also usable as a C string.
  std::string_view name() const { return scheduleName(id); }
};

std::span<const AlgorithmEntry> algorithmRegistry();
// nullptr when `kind` has no schedule called `name` (HOOP_ALGO's spelling).
const AlgorithmEntry* findAlgorithm(OpKind kind, std::string_view name);
// nullptr when `kind` has no schedule `id`.
const AlgorithmEntry* findAlgorithm(OpKind kind, ScheduleId id);
// Whether the hierarchy fits: several hosts with the same number (two or more) of ranks each.
bool hierarchyFits(const Team& comm, const CollectiveArgs& args);

}  // namespace hoop
