// hoop-topo --json: the topology model as JSON (fields documented in README.md).
#pragma once

#include "base/json_writer.h"
#include "topology/topology.h"

namespace hoop {

// Writes the topology as one JSON object value.
void writeTopologyJson(JsonWriter& json, const Topology& topology);

}  // namespace hoop
