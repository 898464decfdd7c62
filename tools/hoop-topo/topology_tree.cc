#include "topology_tree.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <vector>

#include "text_format.h"

namespace hoop {
namespace {

const char* cacheSuffix(CacheKind kind) {
  switch (kind) {
    case CacheKind::kData: return "d";
    case CacheKind::kInstruction: return "i";
    case CacheKind::kUnified: return "";
  }
  return "";
}

std::string cacheName(const CpuCache& cache) {
  return "L" + std::to_string(cache.level) + cacheSuffix(cache.kind) + " " +
         formatBytes(cache.bytes);
}

// Prints every object exactly once, at the innermost level that holds it: a NIC whose NUMA node
// is unknown, or a cache that spans two NUMA nodes, moves up a level instead of disappearing.
class TreePrinter {
 public:
  explicit TreePrinter(const Topology& topology)
      : topology_(topology),
        numaDone_(topology.numaNodes.size()),
        coreDone_(topology.cores.size()),
        cacheDone_(topology.caches.size()),
        gpuDone_(topology.gpus.size()),
        nicDone_(topology.nics.size()) {
    // Caches private to one core print on that core's line.
    for (size_t i = 0; i < topology.caches.size(); ++i) {
      if (topology.caches[i].cores.size() <= 1) cacheDone_[i] = true;
    }
  }

  std::string print() {
    const Machine& machine = topology_.machine;
    char id[32];
    std::snprintf(id, sizeof(id), "%016llx", static_cast<unsigned long long>(machine.hostId));
    line(0) << "machine " << machine.hostName << "  host id " << id
            << "  (topology: " << machine.source << ")\n";
    for (const CpuPackage& package : topology_.packages) {
      line(1) << "package " << package.osIndex;
      if (!package.cpuModel.empty()) out_ << "  " << package.cpuModel;
      out_ << '\n';
      int index = static_cast<int>(package.osIndex);
      for (size_t n = 0; n < topology_.numaNodes.size(); ++n) {
        if (topology_.numaNodes[n].package == index) printNumaNode(n, 2);
      }
      printRest(2, [&](const CpuCore& core) { return core.package == index; });
    }
    for (size_t n = 0; n < topology_.numaNodes.size(); ++n) {
      if (!numaDone_[n]) printNumaNode(n, 1);
    }
    printRest(1, [](const CpuCore&) { return true; });
    printDevices(1, [](int) { return true; });
    return out_.str();
  }

 private:
  std::ostream& line(int depth) {
    out_ << std::string(2 * static_cast<size_t>(depth), ' ');
    return out_;
  }

  void printNumaNode(size_t n, int depth) {
    numaDone_[n] = true;
    const NumaNode& node = topology_.numaNodes[n];
    line(depth) << "NUMA node " << node.osIndex << "  " << formatBytes(node.memoryBytes) << '\n';
    int index = static_cast<int>(node.osIndex);
    printRest(depth + 1, [&](const CpuCore& core) { return core.numaNode == index; });
    printDevices(depth + 1, [&](int numaNode) { return numaNode == index; });
  }

  // Shared caches whose cores all match, then the matching cores not printed yet.
  template <typename CoreMatch>
  void printRest(int depth, const CoreMatch& matches) {
    for (size_t c = 0; c < topology_.caches.size(); ++c) {
      const CpuCache& cache = topology_.caches[c];
      if (cacheDone_[c] || !std::all_of(cache.cores.begin(), cache.cores.end(), [&](size_t core) {
            return matches(topology_.cores[core]);
          })) {
        continue;
      }
      cacheDone_[c] = true;
      std::vector<unsigned> pus;
      for (size_t core : cache.cores) {
        pus.insert(pus.end(), topology_.cores[core].pus.begin(), topology_.cores[core].pus.end());
      }
      line(depth) << cacheName(cache) << "  shared by " << cache.cores.size() << " cores (PUs "
                  << formatIndexList(pus) << ")\n";
    }
    for (size_t c = 0; c < topology_.cores.size(); ++c) {
      if (!coreDone_[c] && matches(topology_.cores[c])) printCore(c, depth);
    }
  }

  void printCore(size_t c, int depth) {
    coreDone_[c] = true;
    const CpuCore& core = topology_.cores[c];
    line(depth) << "core " << core.osIndex << "  PU" << (core.pus.size() == 1 ? " " : "s ")
                << formatIndexList(core.pus);
    // Its private caches, outermost first: "L2 1.25 MiB, L1d 48 KiB, L1i 32 KiB".
    std::vector<const CpuCache*> own;
    for (const CpuCache& cache : topology_.caches) {
      if (cache.cores.size() == 1 && cache.cores[0] == c) own.push_back(&cache);
    }
    std::stable_sort(own.begin(), own.end(), [](const CpuCache* a, const CpuCache* b) {
      return a->level != b->level ? a->level > b->level : a->kind < b->kind;
    });
    for (size_t i = 0; i < own.size(); ++i) out_ << (i == 0 ? "  " : ", ") << cacheName(*own[i]);
    out_ << '\n';
  }

  template <typename NodeMatch>
  void printDevices(int depth, const NodeMatch& matches) {
    for (size_t g = 0; g < topology_.gpus.size(); ++g) {
      const Gpu& gpu = topology_.gpus[g];
      if (gpuDone_[g] || !matches(gpu.numaNode)) continue;
      gpuDone_[g] = true;
      line(depth) << "GPU " << g << "  " << gpu.pciBusId << "  " << gpu.name << '\n';
    }
    for (size_t n = 0; n < topology_.nics.size(); ++n) {
      const Nic& nic = topology_.nics[n];
      if (nicDone_[n] || !matches(nic.numaNode)) continue;
      nicDone_[n] = true;
      line(depth) << "NIC " << nic.label();
      if (!nic.name.empty() && !nic.rdmaDevice.empty()) out_ << " (" << nic.rdmaDevice << ")";
      out_ << "  " << (nic.pciBusId.empty() ? "not on PCI" : nic.pciBusId) << "  "
           << formatSpeed(nic.speedMbps) << '\n';
    }
  }

  const Topology& topology_;
  std::ostringstream out_;
  std::vector<bool> numaDone_, coreDone_, cacheDone_, gpuDone_, nicDone_;
};

}  // namespace

std::string topologyTree(const Topology& topology) { return TreePrinter(topology).print(); }

}  // namespace hoop
