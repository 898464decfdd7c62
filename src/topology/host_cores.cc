#include "topology/host_cores.h"

#include <sched.h>

namespace hoop {

size_t coresOfLocalRanks(const std::vector<int>& peerPids) {
  cpu_set_t all;
  CPU_ZERO(&all);
  if (sched_getaffinity(0, sizeof(all), &all) != 0) return 1;
  for (int pid : peerPids) {
    cpu_set_t theirs;
    CPU_ZERO(&theirs);
    if (sched_getaffinity(pid, sizeof(theirs), &theirs) == 0) CPU_OR(&all, &all, &theirs);
  }
  const int count = CPU_COUNT(&all);
  return count > 0 ? static_cast<size_t>(count) : 1;
}

}  // namespace hoop
