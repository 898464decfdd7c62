#include "topology/hwloc_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "topology/link_speed.h"

namespace hoop {
namespace {

// PCI vendor ids of the GPUs hoop can drive. Servers also carry a BMC display chip (ASPEED,
// Matrox) of the same PCI class, which must not count as a GPU.
constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorAmd = 0x1002;
constexpr unsigned kClassDisplayBase = 0x03;
constexpr unsigned kClass3dController = 0x0302;

// Where hoop's fixtures and annotated exports put a NIC's speed (hwloc has no field for it):
// hwloc-annotate in.xml out.xml os=ib0 info LinkSpeedMbps 200000
constexpr const char* kSpeedInfo = "LinkSpeedMbps";

// hwloc marks objects whose OS index is unknown with HWLOC_UNKNOWN_INDEX; the logical index is
// then the best stable name there is.
unsigned osIndexOf(hwloc_obj_t object) {
  return object->os_index != HWLOC_UNKNOWN_INDEX ? object->os_index : object->logical_index;
}

int singleNumaNode(hwloc_const_nodeset_t nodeset) {
  if (nodeset == nullptr || hwloc_bitmap_weight(nodeset) != 1) return kUnknownIndex;
  return hwloc_bitmap_first(nodeset);
}

int packageOf(hwloc_topology_t topology, hwloc_obj_t object) {
  hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, object);
  return package != nullptr ? static_cast<int>(osIndexOf(package)) : kUnknownIndex;
}

// An I/O object hangs below the CPU-side object it is local to (a package, a NUMA node's parent);
// that object's nodeset says which NUMA node, when it names exactly one.
int numaNodeOfIo(hwloc_topology_t topology, hwloc_obj_t object) {
  hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, object);
  return local != nullptr ? singleNumaNode(local->nodeset) : kUnknownIndex;
}

std::string pciBusId(hwloc_obj_t device) {
  const auto& pci = device->attr->pcidev;
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%01x", static_cast<unsigned>(pci.domain),
                static_cast<unsigned>(pci.bus), static_cast<unsigned>(pci.dev),
                static_cast<unsigned>(pci.func));
  return text;
}

std::vector<uint64_t> pciPathOf(hwloc_obj_t device) {
  std::vector<uint64_t> path;
  for (hwloc_obj_t up = device->parent; up != nullptr && up->type == HWLOC_OBJ_BRIDGE;
       up = up->parent) {
    path.push_back(up->gp_index);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

const char* info(hwloc_obj_t object, const char* name) {
  return object != nullptr ? hwloc_obj_get_info_by_name(object, name) : nullptr;
}

uint64_t speedInfoMbps(hwloc_obj_t object) {
  const char* text = info(object, kSpeedInfo);
  if (text == nullptr) return 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  return end != text && *end == '\0' ? value : 0;
}

std::vector<CpuPackage> readPackages(hwloc_topology_t topology) {
  std::vector<CpuPackage> packages;
  for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr);
       object != nullptr;
       object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, object)) {
    const char* model = info(object, "CPUModel");
    packages.push_back({osIndexOf(object), model != nullptr ? model : ""});
  }
  std::sort(packages.begin(), packages.end(),
            [](const CpuPackage& a, const CpuPackage& b) { return a.osIndex < b.osIndex; });
  return packages;
}

std::vector<NumaNode> readNumaNodes(hwloc_topology_t topology) {
  std::vector<NumaNode> nodes;
  for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr);
       object != nullptr;
       object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, object)) {
    nodes.push_back({osIndexOf(object), packageOf(topology, object),
                     static_cast<size_t>(object->attr->numanode.local_memory)});
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.osIndex < b.osIndex; });
  return nodes;
}

// Cores in hwloc's logical order (package by package), with the hwloc object each came from so
// caches can be matched to them by cpuset.
struct CoresWithObjects {
  std::vector<CpuCore> cores;
  std::vector<hwloc_obj_t> objects;
};

CoresWithObjects readCores(hwloc_topology_t topology) {
  CoresWithObjects result;
  auto add = [&](hwloc_obj_t object) {
    CpuCore core;
    core.osIndex = osIndexOf(object);
    core.package = packageOf(topology, object);
    core.numaNode = singleNumaNode(object->nodeset);
    for (hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, object->cpuset,
                                                                   HWLOC_OBJ_PU, nullptr);
         pu != nullptr; pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, object->cpuset,
                                                                      HWLOC_OBJ_PU, pu)) {
      core.pus.push_back(osIndexOf(pu));
    }
    std::sort(core.pus.begin(), core.pus.end());
    result.cores.push_back(std::move(core));
    result.objects.push_back(object);
  };
  for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_CORE, nullptr);
       object != nullptr; object = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_CORE, object)) {
    add(object);
  }
  // Some platforms report PUs without Core objects; each such PU is then a core of its own, so
  // every PU belongs to exactly one core.
  for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, nullptr); pu != nullptr;
       pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, pu)) {
    if (hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu) == nullptr) add(pu);
  }
  return result;
}

std::vector<CpuCache> readCaches(hwloc_topology_t topology, const CoresWithObjects& cores) {
  static constexpr hwloc_obj_type_t kCacheTypes[] = {
      HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L1ICACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L2ICACHE,
      HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L3ICACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE};
  std::vector<CpuCache> caches;
  for (hwloc_obj_type_t type : kCacheTypes) {
    for (hwloc_obj_t object = hwloc_get_next_obj_by_type(topology, type, nullptr);
         object != nullptr; object = hwloc_get_next_obj_by_type(topology, type, object)) {
      const auto& attr = object->attr->cache;
      CpuCache cache;
      cache.level = attr.depth;
      cache.kind = attr.type == HWLOC_OBJ_CACHE_DATA          ? CacheKind::kData
                   : attr.type == HWLOC_OBJ_CACHE_INSTRUCTION ? CacheKind::kInstruction
                                                              : CacheKind::kUnified;
      cache.bytes = static_cast<size_t>(attr.size);
      for (size_t i = 0; i < cores.objects.size(); ++i) {
        if (hwloc_bitmap_isincluded(cores.objects[i]->cpuset, object->cpuset)) {
          cache.cores.push_back(i);
        }
      }
      caches.push_back(std::move(cache));
    }
  }
  return caches;
}

std::vector<Nic> readNics(hwloc_topology_t topology, bool readSysfsSpeeds) {
  // One NIC per PCI function: hwloc shows an InfiniBand/RoCE port as two OS devices (ib0 and
  // mlx5_0) under the same PCI device.
  std::vector<Nic> nics;
  std::map<hwloc_obj_t, size_t> nicOfDevice;
  for (hwloc_obj_t osdev = hwloc_get_next_osdev(topology, nullptr); osdev != nullptr;
       osdev = hwloc_get_next_osdev(topology, osdev)) {
    hwloc_obj_osdev_type_t type = osdev->attr->osdev.type;
    if ((type != HWLOC_OBJ_OSDEV_NETWORK && type != HWLOC_OBJ_OSDEV_OPENFABRICS) ||
        osdev->name == nullptr) {
      continue;
    }
    bool onPci = osdev->parent != nullptr && osdev->parent->type == HWLOC_OBJ_PCI_DEVICE;
    hwloc_obj_t device = onPci ? osdev->parent : osdev;
    auto [slot, added] = nicOfDevice.try_emplace(device, nics.size());
    if (added) {
      Nic nic;
      nic.numaNode = numaNodeOfIo(topology, device);
      if (onPci) {
        nic.pciBusId = pciBusId(device);
        nic.pciPath = pciPathOf(device);
      }
      nic.speedMbps = speedInfoMbps(onPci ? device : nullptr);
      nics.push_back(std::move(nic));
    }
    Nic& nic = nics[slot->second];
    uint64_t speed = speedInfoMbps(osdev);
    if (type == HWLOC_OBJ_OSDEV_NETWORK) {
      if (nic.name.empty()) nic.name = osdev->name;
      if (readSysfsSpeeds) speed = std::max(speed, networkLinkSpeedMbps(osdev->name));
    } else {
      if (nic.rdmaDevice.empty()) nic.rdmaDevice = osdev->name;
      if (readSysfsSpeeds) speed = std::max(speed, rdmaLinkSpeedMbps(osdev->name));
    }
    nic.speedMbps = std::max(nic.speedMbps, speed);
  }
  // PCI order, then devices without a PCI address by name.
  std::sort(nics.begin(), nics.end(), [](const Nic& a, const Nic& b) {
    return std::make_tuple(a.pciBusId.empty(), a.pciBusId, a.label()) <
           std::make_tuple(b.pciBusId.empty(), b.pciBusId, b.label());
  });
  return nics;
}

bool isComputeGpu(hwloc_obj_t device) {
  for (hwloc_obj_t child = device->io_first_child; child != nullptr; child = child->next_sibling) {
    // CUDA, OpenCL, Level Zero and ROCm backends report compute devices as co-processors.
    if (child->type == HWLOC_OBJ_OS_DEVICE && child->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC) {
      return true;
    }
  }
  unsigned classId = device->attr->pcidev.class_id;
  unsigned vendor = device->attr->pcidev.vendor_id;
  return classId == kClass3dController ||
         ((classId >> 8) == kClassDisplayBase && (vendor == kVendorNvidia || vendor == kVendorAmd));
}

std::string gpuName(hwloc_obj_t device) {
  for (hwloc_obj_t child = device->io_first_child; child != nullptr; child = child->next_sibling) {
    if (const char* model = info(child, "GPUModel")) return model;
  }
  if (const char* model = info(device, "PCIDevice")) return model;
  char text[32];
  std::snprintf(text, sizeof(text), "PCI %04x:%04x", device->attr->pcidev.vendor_id,
                device->attr->pcidev.device_id);
  return text;
}

std::vector<Gpu> readGpus(hwloc_topology_t topology) {
  std::vector<Gpu> gpus;
  for (hwloc_obj_t device = hwloc_get_next_pcidev(topology, nullptr); device != nullptr;
       device = hwloc_get_next_pcidev(topology, device)) {
    if (!isComputeGpu(device)) continue;
    gpus.push_back(
        {pciBusId(device), gpuName(device), numaNodeOfIo(topology, device), pciPathOf(device)});
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.pciBusId < b.pciBusId; });
  return gpus;
}

}  // namespace

Topology readHwlocTopology(hwloc_topology_t topology, bool readSysfsSpeeds) {
  Topology result;
  result.packages = readPackages(topology);
  result.numaNodes = readNumaNodes(topology);
  CoresWithObjects cores = readCores(topology);
  result.caches = readCaches(topology, cores);
  result.cores = std::move(cores.cores);
  result.nics = readNics(topology, readSysfsSpeeds);
  result.gpus = readGpus(topology);
  return result;
}

}  // namespace hoop
