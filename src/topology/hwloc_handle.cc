#include "topology/hwloc_handle.h"

#include <cerrno>
#include <cstdio>
#include <memory>

#include "base/error.h"

namespace hoop {

HwlocTopology::HwlocTopology() {
  if (hwloc_topology_init(&topology_) != 0) {
    topology_ = nullptr;
    fail(hoopSystemError, "hwloc_topology_init failed: ", errnoText(errno));
  }
  hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // hwloc leaves instruction caches out by default; the tree shows them beside the data caches.
  hwloc_topology_set_icache_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_ALL);
}

HwlocTopology::~HwlocTopology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

void HwlocTopology::loadXml(const std::string& path) {
  // hwloc's own failure is a bare errno, and when set_xml fails a following load() silently
  // discovers the live machine instead: check the file first so the message can say what is
  // wrong, and never load after a failed set_xml.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "r"), &std::fclose);
  if (file == nullptr) {
    fail(hoopInvalidArgument, "cannot read topology file '", path, "': ", errnoText(errno),
         "; it should be an hwloc XML export (lstopo --of xml FILE)");
  }
  file.reset();
  if (hwloc_topology_set_xml(topology_, path.c_str()) != 0 || hwloc_topology_load(topology_) != 0) {
    fail(hoopInvalidArgument, "topology file '", path,
         "' is not a valid hwloc XML topology (check it with: lstopo --input ", path, ")");
  }
}

void HwlocTopology::loadLive() {
  if (hwloc_topology_load(topology_) != 0) {
    fail(hoopSystemError, "hwloc could not discover this machine: ", errnoText(errno),
         " (set HOOP_TOPO_FILE to an hwloc XML export to describe it instead)");
  }
}

}  // namespace hoop
