// Turns a loaded hwloc topology into hoop's plain model (topology.h). Everything hwloc-specific
// stays in this file and hwloc_handle.h.
#pragma once

#include <hwloc.h>

#include "topology/topology.h"

namespace hoop {

// Fills everything but Topology::machine. `readSysfsSpeeds`: also take NIC link speeds from
// /sys (only true for the live machine; an XML file describes some other machine).
Topology readHwlocTopology(hwloc_topology_t topology, bool readSysfsSpeeds);

}  // namespace hoop
