// The end-to-end check: an allreduce over the whole job with each schedule forced in turn (ring,
// tree), its result compared exactly with what integer inputs must sum to. A wrong result is
// bisected (bisection.h) down to a host. A collective that fails outright (a dead peer, the
// time-out) leaves the communicator failed: the caller bisects that failure the same way.
#pragma once

#include <vector>

#include "analysis.h"
#include "hoop/hoop.h"
#include "plan.h"

namespace hoop::validate {

class Bisection;

// Collective over comm. Throws hoop::Error when the communicator fails. `bisection` halves a
// wrong result down to a host (null: not bisected).
std::vector<CollectiveOutcome> checkCollectives(hoopComm_t comm, const Layout& layout, size_t bytes,
                                                Bisection* bisection);

// One allreduce of `count` int32 over comm, whose members are `members` (global ranks, this
// rank `globalRank` among them): 1 on every rank when any rank's result is wrong, else 0.
// `seconds`: this rank's time. Throws hoop::Error when comm fails.
int allreduceWrong(hoopComm_t comm, int globalRank, const std::vector<int>& members, size_t count,
                   double& seconds);

}  // namespace hoop::validate
