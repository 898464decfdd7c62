#include "rank_plan.h"

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/hash.h"
#include "base/json_writer.h"
#include "text_format.h"
#include "topology/affinity.h"
#include "topology/host_ranks.h"
#include "topology/topology.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

struct PeerRoute {
  int peer = 0;
  std::string transport;  // "self", a transport name, or empty with `error`
  std::string error;
};

struct RankDetail {
  int rank = 0;
  LocalRank local;
  std::string transportSetting;
  std::vector<PeerRoute> routes;
  Topology topology;
  std::optional<size_t> nic;
  int numaNode = kUnknownIndex;
};

struct Plan {
  std::vector<std::string> hosts;
  std::vector<int> ring;
  std::vector<std::vector<int>> ranksByHost;  // hosts in ring order
  std::optional<RankDetail> detail;
};

Plan makePlan(const ToolOptions& options) {
  Plan plan;
  plan.hosts = options.hosts;
  // Names stand in for hostname + boot id: equal names, equal host.
  std::vector<uint64_t> hostIds;
  for (const std::string& host : options.hosts) hostIds.push_back(fnv1a(host));
  plan.ring = ringOrder(hostIds);
  for (size_t i = 0; i < plan.ring.size(); ++i) {
    if (i == 0 || hostIds[plan.ring[i]] != hostIds[plan.ring[i - 1]])
      plan.ranksByHost.emplace_back();
    plan.ranksByHost.back().push_back(plan.ring[i]);
  }
  if (!options.rank) return plan;

  RankDetail detail;
  detail.rank = *options.rank;
  detail.local = localRankOf(hostIds, detail.rank);
  TransportPolicy policy = TransportPolicy::fromEnv();
  detail.transportSetting = policy.text();
  for (int peer = 0; peer < static_cast<int>(hostIds.size()); ++peer) {
    PeerRoute route{peer, "self", ""};
    if (peer != detail.rank) {
      try {
        const PeerPair pair{detail.rank, peer, hostIds[peer] == hostIds[detail.rank],
                            str("rank ", peer, " (host ", options.hosts[peer], ")")};
        route.transport = std::string(chooseTransport(policy, pair).name());
      } catch (const Error& error) {
        route.transport.clear();
        route.error = error.what();
      }
    }
    detail.routes.push_back(route);
  }
  detail.topology = discoverTopology();
  RankPlacement placement{options.gpu, options.cpu};
  detail.nic = chooseNic(detail.topology, placement, detail.local.rank);
  detail.numaNode = chooseNumaNode(detail.topology, placement, detail.nic);
  plan.detail = std::move(detail);
  return plan;
}

void printText(const Plan& plan, std::ostream& out) {
  out << plan.hosts.size() << " ranks on " << plan.ranksByHost.size() << " hosts\n";
  out << "ring order:";
  for (int rank : plan.ring) out << ' ' << rank;
  out << '\n';
  for (const auto& ranks : plan.ranksByHost) {
    std::vector<unsigned> list(ranks.begin(), ranks.end());
    out << "  host " << plan.hosts[ranks[0]] << ": ranks " << formatIndexList(list) << '\n';
  }
  if (!plan.detail) return;
  const RankDetail& detail = *plan.detail;
  out << "rank " << detail.rank << " (host " << plan.hosts[detail.rank] << "): local rank "
      << detail.local.rank << " of " << detail.local.size << '\n';
  out << "  transports (HOOP_TRANSPORT="
      << (detail.transportSetting.empty() ? "unset" : detail.transportSetting) << "):\n";
  for (const PeerRoute& route : detail.routes) {
    out << "    to rank " << route.peer << " (host " << plan.hosts[route.peer]
        << "): " << (route.error.empty() ? route.transport : "error: " + route.error) << '\n';
  }
  out << "  on this machine (" << detail.topology.machine.source << "):\n";
  if (detail.nic) {
    const Nic& nic = detail.topology.nics[*detail.nic];
    out << "    NIC " << nic.label();
    if (!nic.name.empty() && !nic.rdmaDevice.empty()) out << " (" << nic.rdmaDevice << ")";
    out << "  " << (nic.pciBusId.empty() ? "not on PCI" : nic.pciBusId) << "  "
        << formatSpeed(nic.speedMbps) << '\n';
  } else {
    out << "    NIC none\n";
  }
  out << "    NUMA node "
      << (detail.numaNode == kUnknownIndex ? std::string("unknown")
                                           : std::to_string(detail.numaNode))
      << '\n';
}

void printJson(const Plan& plan, std::ostream& out) {
  JsonWriter json;
  json.beginObject();
  json.key("ranks");
  json.unsignedInteger(static_cast<uint64_t>(plan.hosts.size()));
  json.key("ring");
  json.beginArray(/*oneLine=*/true);
  for (int rank : plan.ring) json.integer(rank);
  json.endArray();
  json.key("hosts");
  json.beginArray();
  for (const auto& ranks : plan.ranksByHost) {
    json.beginObject();
    json.key("name");
    json.string(plan.hosts[ranks[0]]);
    json.key("ranks");
    json.beginArray(/*oneLine=*/true);
    for (int rank : ranks) json.integer(rank);
    json.endArray();
    json.endObject();
  }
  json.endArray();
  if (plan.detail) {
    const RankDetail& detail = *plan.detail;
    json.key("rank");
    json.beginObject();
    json.key("rank");
    json.integer(detail.rank);
    json.key("host");
    json.string(plan.hosts[detail.rank]);
    json.key("local_rank");
    json.integer(detail.local.rank);
    json.key("local_size");
    json.integer(detail.local.size);
    json.key("transports");
    json.beginArray();
    for (const PeerRoute& route : detail.routes) {
      json.beginObject();
      json.key("peer");
      json.integer(route.peer);
      json.key("transport");
      if (route.error.empty()) {
        json.string(route.transport);
      } else {
        json.null();
        json.key("error");
        json.string(route.error);
      }
      json.endObject();
    }
    json.endArray();
    json.key("nic");
    if (detail.nic) {
      json.string(detail.topology.nics[*detail.nic].label());
    } else {
      json.null();
    }
    json.key("numa_node");
    if (detail.numaNode == kUnknownIndex) {
      json.null();
    } else {
      json.integer(detail.numaNode);
    }
    json.endObject();
  }
  json.endObject();
  out << json.text();
}

}  // namespace

int printRankPlan(const ToolOptions& options, std::ostream& out) {
  Plan plan = makePlan(options);
  if (options.json) {
    printJson(plan, out);
  } else {
    printText(plan, out);
  }
  if (plan.detail) {
    for (const PeerRoute& route : plan.detail->routes) {
      if (!route.error.empty()) return 1;
    }
  }
  return 0;
}

}  // namespace hoop
