// Which schedule hoop runs for a collective, as hoop-perf names and selects it (--algo). hoop picks
// the allreduce schedule from HOOP_ALGO when a communicator is created, so --algo works by setting
// HOOP_ALGO and creating one communicator per schedule; every other collective has one schedule.
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

// The schedules hoop has for coll, in the order --algo all runs them: allreduce "ring", "direct";
// allgather and reducescatter "ring"; broadcast and reduce "chain"; sendrecv "grouped";
// alltoall "pairwise".
std::vector<std::string_view> schedulesOf(Collective coll);

// "" when --algo NAME (or "all") is valid for coll, else one line saying what is.
std::string checkAlgoOption(Collective coll, std::string_view algo);

// The tables a run prints, one per entry: the schedule --algo forces, or nullopt for "no --algo"
// (hoop's own choice, one table, the header exactly as without --algo).
std::vector<std::optional<std::string>> tableAlgorithms(Collective coll, std::string_view algo);

// Whether a table's schedule has to be forced through HOOP_ALGO (only allreduce has a choice).
bool algorithmNeedsEnvironment(Collective coll);

// The schedule hoop runs for one row of `bytes` (the whole buffer): the forced one when given,
// else HOOP_ALGO when set, else the allreduce size rule (direct while bytes*(ranks-1) <=
// directMaxBytes). Mirrors src/algorithms/dispatch.cc.
std::string scheduleForRow(Collective coll, size_t bytes, int nranks,
                           const std::optional<std::string>& forced, size_t directMaxBytes);

// HOOP_DIRECT_MAX_BYTES from the environment as hoop reads it (default 64K), for scheduleForRow.
size_t directMaxBytesFromEnv();

// HOOP_ALGO from the environment, or nullopt when unset or empty.
std::optional<std::string> forcedAlgorithmFromEnv();

}  // namespace hoop::perf
