// Which schedule hoop runs for a collective, as hoop-perf names and selects it (--algo). hoop reads
// HOOP_ALGO when a communicator is created, so --algo works by setting HOOP_ALGO and creating one
// communicator per schedule. --algo takes HOOP_ALGO's names; each row then names the schedule that
// actually ran, as hoop itself reports it (hoopCommScheduleName).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collective.h"

namespace hoop::perf {

// The transports the run uses, as HOOP_TRANSPORT steers them: its value when set, else "auto"
// (shared memory to ranks on the same host, tcp to the others).
std::string transportInUse();

// The schedules hoop has for coll, by their HOOP_ALGO names, in the order --algo all runs them:
// allreduce "ring", "direct", "oneshot", "hierarchical"; allgather and broadcast "ring",
// "hierarchical"; reducescatter and reduce "ring"; sendrecv "grouped"; alltoall "pairwise".
// A schedule that cannot serve a call (hierarchical on one host) leaves it to hoop's choice.
std::vector<std::string_view> schedulesOf(Collective coll);

// --algo's entry for a table of hoop's own choice beside forced ones: HOOP_ALGO unset for it.
inline constexpr std::string_view kOwnChoice = "auto";

// "" when --algo is valid for coll, else one line saying what is. --algo is a comma-separated
// list of entries, each a schedule's name, "all" (every schedule) or "auto" (kOwnChoice).
std::string checkAlgoOption(Collective coll, std::string_view algo);

// The tables a run prints, one per entry in order ("all": one per schedule): the schedule --algo
// forces, "auto", or nullopt for "no --algo" (hoop's own choice as the environment leaves it, one
// table, the header exactly as without --algo).
std::vector<std::optional<std::string>> tableAlgorithms(Collective coll, std::string_view algo);

// Whether a table's schedule can be forced: coll has more than one.
bool scheduleCanBeForced(Collective coll);

}  // namespace hoop::perf
