#include "topology_json.h"

#include <cstdio>

namespace hoop {
namespace {

void indexOrNull(JsonWriter& json, int index) {
  if (index == kUnknownIndex) {
    json.null();
  } else {
    json.integer(index);
  }
}

const char* cacheKindName(CacheKind kind) {
  switch (kind) {
    case CacheKind::kData: return "data";
    case CacheKind::kInstruction: return "instruction";
    case CacheKind::kUnified: return "unified";
  }
  return "unified";
}

}  // namespace

void writeTopologyJson(JsonWriter& json, const Topology& topology) {
  json.beginObject();
  json.key("machine");
  json.beginObject();
  json.key("hostname");
  json.string(topology.machine.hostName);
  // A string: 64-bit ids do not survive JSON readers that hold numbers as doubles.
  char id[32];
  std::snprintf(id, sizeof(id), "%016llx",
                static_cast<unsigned long long>(topology.machine.hostId));
  json.key("host_id");
  json.string(id);
  json.key("source");
  json.string(topology.machine.source);
  json.endObject();

  json.key("packages");
  json.beginArray();
  for (const CpuPackage& package : topology.packages) {
    json.beginObject();
    json.key("os_index");
    json.unsignedInteger(package.osIndex);
    json.key("cpu_model");
    json.string(package.cpuModel);
    json.endObject();
  }
  json.endArray();

  json.key("numa_nodes");
  json.beginArray();
  for (const NumaNode& node : topology.numaNodes) {
    json.beginObject();
    json.key("os_index");
    json.unsignedInteger(node.osIndex);
    json.key("package");
    indexOrNull(json, node.package);
    json.key("memory_bytes");
    json.unsignedInteger(static_cast<uint64_t>(node.memoryBytes));
    json.endObject();
  }
  json.endArray();

  json.key("cores");
  json.beginArray();
  for (const CpuCore& core : topology.cores) {
    json.beginObject();
    json.key("os_index");
    json.unsignedInteger(core.osIndex);
    json.key("package");
    indexOrNull(json, core.package);
    json.key("numa_node");
    indexOrNull(json, core.numaNode);
    json.key("pus");
    json.beginArray(/*oneLine=*/true);
    for (unsigned pu : core.pus) json.unsignedInteger(pu);
    json.endArray();
    json.endObject();
  }
  json.endArray();

  json.key("caches");
  json.beginArray();
  for (const CpuCache& cache : topology.caches) {
    json.beginObject();
    json.key("level");
    json.unsignedInteger(cache.level);
    json.key("type");
    json.string(cacheKindName(cache.kind));
    json.key("size_bytes");
    json.unsignedInteger(static_cast<uint64_t>(cache.bytes));
    json.key("cores");
    json.beginArray(/*oneLine=*/true);
    for (size_t core : cache.cores) json.unsignedInteger(static_cast<uint64_t>(core));
    json.endArray();
    json.endObject();
  }
  json.endArray();

  json.key("nics");
  json.beginArray();
  for (const Nic& nic : topology.nics) {
    json.beginObject();
    json.key("name");
    json.string(nic.name);
    json.key("rdma_device");
    json.string(nic.rdmaDevice);
    json.key("speed_mbps");
    if (nic.speedMbps == 0) {
      json.null();
    } else {
      json.unsignedInteger(nic.speedMbps);
    }
    json.key("numa_node");
    indexOrNull(json, nic.numaNode);
    json.key("pci_bus_id");
    json.string(nic.pciBusId);
    json.endObject();
  }
  json.endArray();

  json.key("gpus");
  json.beginArray();
  for (const Gpu& gpu : topology.gpus) {
    json.beginObject();
    json.key("pci_bus_id");
    json.string(gpu.pciBusId);
    json.key("name");
    json.string(gpu.name);
    json.key("numa_node");
    indexOrNull(json, gpu.numaNode);
    json.endObject();
  }
  json.endArray();
  json.endObject();
}

}  // namespace hoop
