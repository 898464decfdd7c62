// The end-to-end check: an allreduce over the whole job with each schedule forced in turn (ring,
// tree), its result compared exactly with what integer inputs must sum to. A wrong result is
// bisected: the job is split in two halves of its hosts, each half checks its own allreduce, and
// the half that is still wrong is halved again until one host is left. A collective that fails
// outright (a dead peer, the time-out) leaves the communicator failed: it is reported as it is.
#pragma once

#include <vector>

#include "analysis.h"
#include "hoop/hoop.h"
#include "plan.h"

namespace hoop::validate {

// Collective over comm. Throws hoop::Error when the communicator fails.
std::vector<CollectiveOutcome> checkCollectives(hoopComm_t comm, const Layout& layout,
                                                size_t bytes);

}  // namespace hoop::validate
