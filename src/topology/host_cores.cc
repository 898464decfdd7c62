#include "topology/host_cores.h"

#include <fstream>
#include <string>

#include "base/env.h"
#include "topology/sysfs_list.h"

namespace hoop {
namespace {

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
    const size_t sharers = entriesInSysfsList(firstLine(dir + "shared_cpu_list"));
    return sharers == 0 ? bytes : bytes / sharers;
  }
  return 0;
}

}  // namespace hoop
