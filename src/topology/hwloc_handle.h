// Owns one hwloc topology handle, so every path out of discovery (a parse error thrown half way
// included) destroys it exactly once.
#pragma once

#include <hwloc.h>

#include <string>

namespace hoop {

class HwlocTopology {
 public:
  // An initialized, not yet loaded topology that keeps the important I/O objects (PCI devices
  // that are NICs, GPUs, storage, the bridges above them, their OS devices); hwloc drops all
  // I/O by default. Instruction caches are kept too.
  HwlocTopology();
  ~HwlocTopology();
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;

  // Reads the XML export at `path` instead of the live machine. Throws hoopInvalidArgument
  // naming the file when it is missing or not hwloc XML.
  void loadXml(const std::string& path);
  // Discovers the machine this process runs on. Throws hoopSystemError when hwloc fails.
  void loadLive();

  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

}  // namespace hoop
