#include "hooprun/cpu_binding.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <system_error>

#include "hooprun/usage_error.h"

namespace hoop::run {
namespace {

// -1 when the file is missing or holds no number (CPUs without topology files, containers).
int readTopologyId(int cpu, const char* name) {
  std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/" + name);
  int id = -1;
  if (!(in >> id)) return -1;
  return id;
}

}  // namespace

Binding parseBinding(const std::string& text) {
  if (text == "none") return Binding::kNone;
  if (text == "core") return Binding::kCore;
  throw UsageError("--bind-to '" + text + "': give 'core' or 'none'");
}

std::vector<std::vector<int>> groupIntoCores(std::vector<int> cpus, const CoreOfCpu& coreOf) {
  std::sort(cpus.begin(), cpus.end());
  std::map<std::pair<int, int>, size_t> indexOfCore;
  std::vector<std::vector<int>> cores;
  for (int cpu : cpus) {
    auto [it, added] = indexOfCore.try_emplace(coreOf(cpu), cores.size());
    if (added) cores.emplace_back();
    cores[it->second].push_back(cpu);
  }
  return cores;
}

std::vector<std::vector<int>> usableCores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof(mask), &mask) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return groupIntoCores(cpus, [](int cpu) -> std::pair<int, int> {
    const int core = readTopologyId(cpu, "core_id");
    if (core < 0) return {-1, cpu};  // unknown: a core of its own
    return {readTopologyId(cpu, "physical_package_id"), core};
  });
}

std::vector<int> cpusOfLocalRank(const std::vector<std::vector<int>>& cores, size_t localRank) {
  if (cores.empty()) return {};
  return cores[localRank % cores.size()];
}

std::string cpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) text += (text.empty() ? "" : ",") + std::to_string(cpu);
  return text;
}

ScopedCpuBinding::ScopedCpuBinding(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  if (::sched_getaffinity(0, sizeof(previous_), &previous_) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : cpus) CPU_SET(cpu, &mask);
  if (::sched_setaffinity(0, sizeof(mask), &mask) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "sched_setaffinity to CPUs " + cpuListText(cpus));
  }
  active_ = true;
}

ScopedCpuBinding::~ScopedCpuBinding() {
  // Failing to widen our own mask again only slows hooprun's relaying down; nothing to report.
  if (active_) ::sched_setaffinity(0, sizeof(previous_), &previous_);
}

}  // namespace hoop::run
