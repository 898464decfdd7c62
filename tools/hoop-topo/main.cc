// hoop-topo: shows the machine as hoop's topology layer sees it, and what hoop would decide from
// it (ring order, transports, NIC and NUMA placement). See README.md and --help.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json_writer.h"
#include "options.h"
#include "rank_plan.h"
#include "topology/topology.h"
#include "topology_json.h"
#include "topology_tree.h"

int main(int argc, char** argv) {
  hoop::ToolOptions options;
  try {
    options = hoop::parseToolOptions(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const hoop::UsageError& error) {
    std::cerr << "hoop-topo: " << error.what() << '\n'
              << hoop::kToolSynopsis << "run hoop-topo --help for details\n";
    return 2;
  }
  if (options.help) {
    std::cout << hoop::kToolSynopsis << hoop::kToolDetails;
    return 0;
  }
  try {
    if (!options.hosts.empty()) return hoop::printRankPlan(options, std::cout);
    hoop::Topology topology = hoop::discoverTopology();
    if (options.json) {
      hoop::JsonWriter json;
      hoop::writeTopologyJson(json, topology);
      std::cout << json.text();
    } else {
      std::cout << hoop::topologyTree(topology);
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "hoop-topo: " << error.what() << '\n';
    return 1;
  }
}
