#include "topology/host_cores.h"

#include <exception>
#include <fstream>
#include <string>

#include "core/env.h"

namespace hoop {
namespace {

// CPUs in a sysfs list such as "0-3,8,10-11"; 0 when it cannot be read.
size_t cpusInList(const std::string& list) {
  size_t count = 0;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    const std::string range = list.substr(at, end - at);
    const size_t dash = range.find('-');
    try {
      if (dash == std::string::npos) {
        (void)std::stoul(range);
        count += 1;
      } else {
        const unsigned long first = std::stoul(range.substr(0, dash));
        const unsigned long last = std::stoul(range.substr(dash + 1));
        if (last < first) return 0;
        count += last - first + 1;
      }
    } catch (const std::exception&) {
      return 0;
    }
    at = end + 1;
  }
  return count;
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

CpuMask ownCpuMask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuMask mask;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return mask.set();
  for (size_t cpu = 0; cpu < kMaxCpus; ++cpu) {
    if (CPU_ISSET(cpu, &set)) mask.set(cpu);
  }
  return mask;
}

size_t cpusInUnion(const std::vector<CpuMask>& masks) {
  CpuMask all;
  for (const CpuMask& mask : masks) all |= mask;
  return all.any() ? all.count() : 1;
}

size_t level2BytesPerCpu(const CpuMask& mask) {
  size_t cpu = 0;
  while (cpu < kMaxCpus && !mask.test(cpu)) ++cpu;
  if (cpu == kMaxCpus) return 0;
  const std::string caches = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index";
  // The indices run L1 data, L1 instruction, L2, ...; the level-2 entry that holds data.
  for (int index = 0; index < 8; ++index) {
    const std::string dir = caches + std::to_string(index) + "/";
    if (firstLine(dir + "level") != "2" || firstLine(dir + "type") == "Instruction") continue;
    // sysfs writes "1024K"; a size it writes otherwise counts as not said.
    const size_t bytes = parseByteSize(firstLine(dir + "size")).value_or(0);
    const size_t sharers = cpusInList(firstLine(dir + "shared_cpu_list"));
    return sharers == 0 ? bytes : bytes / sharers;
  }
  return 0;
}

}  // namespace hoop
