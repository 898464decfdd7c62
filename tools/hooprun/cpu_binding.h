// --bind-to core: each rank started on this machine runs on one core of its own (its hardware
// threads), local rank r on core r mod the cores hooprun may use, as mpirun binds by default.
// Ranks that outnumber the cores share them round-robin (mpirun would ask for
// overload-allowed); binding still keeps each rank on one core instead of wandering, which is
// what steadies a job's timing.
#pragma once

#include <sched.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hoop::run {

enum class Binding { kNone, kCore };

// "none" or "core"; throws UsageError naming the value otherwise.
Binding parseBinding(const std::string& text);

// `cpus` grouped into cores: coreOf(cpu) says which (package, core) a CPU belongs to. Cores come
// in the order of their first CPU, each CPU list in ascending order.
using CoreOfCpu = std::function<std::pair<int, int>(int cpu)>;
std::vector<std::vector<int>> groupIntoCores(std::vector<int> cpus, const CoreOfCpu& coreOf);

// The cores this process may run on: its affinity mask grouped by the kernel's topology
// (/sys/devices/system/cpu/cpuN/topology). A CPU whose topology cannot be read is a core of its
// own. Throws std::system_error when the mask cannot be read.
std::vector<std::vector<int>> usableCores();

// The CPUs of local rank `localRank`: core localRank % cores.size(). Empty when `cores` is.
std::vector<int> cpusOfLocalRank(const std::vector<std::vector<int>>& cores, size_t localRank);

// "0,1" or "2": a CPU list for messages.
std::string cpuListText(const std::vector<int>& cpus);

// Sets this process's affinity to `cpus` for the lifetime of the object and restores the
// previous mask after: a child started meanwhile (posix_spawn has no affinity attribute)
// inherits the mask. Nothing happens for an empty list. Throws std::system_error.
class ScopedCpuBinding {
 public:
  explicit ScopedCpuBinding(const std::vector<int>& cpus);
  ~ScopedCpuBinding();
  ScopedCpuBinding(const ScopedCpuBinding&) = delete;
  ScopedCpuBinding& operator=(const ScopedCpuBinding&) = delete;

 private:
  bool active_ = false;
  cpu_set_t previous_{};
};

}  // namespace hoop::run
