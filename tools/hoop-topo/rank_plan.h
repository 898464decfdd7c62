// hoop-topo --hosts [--rank]: what hoop decides from the host of each rank (ring order, local
// ranks, the transport to each peer) and, for one rank, the NIC and NUMA node it would use on
// this machine.
#pragma once

#include <ostream>

#include "options.h"

namespace hoop {

// Prints the plan as text or JSON. Returns the exit status: 1 when some peer cannot be reached
// under HOOP_TRANSPORT. Throws hoop::Error for a bad HOOP_TRANSPORT or HOOP_TOPO_FILE.
int printRankPlan(const ToolOptions& options, std::ostream& out);

}  // namespace hoop
