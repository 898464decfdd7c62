// The kernel's list format for sets of CPUs and NUMA nodes, as sysfs writes it ("0-3,8,10-11"):
// /sys/devices/system/node/online, .../cpuN/cache/indexK/shared_cpu_list.
#pragma once

#include <cstddef>
#include <string>

namespace hoop {

// How many entries `list` names; 0 when it is empty or not in that format.
size_t entriesInSysfsList(const std::string& list);

}  // namespace hoop
