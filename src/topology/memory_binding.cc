#include "topology/memory_binding.h"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <vector>

#include "base/error.h"
#include "topology/sysfs_list.h"

namespace hoop {

std::string preferNumaNode(void* address, size_t bytes, int node) {
  if (node < 0) return "no NUMA node to prefer";
  if (bytes == 0) return "";
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(address) + bytes + page - 1) / page * page;
  constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(static_cast<size_t>(node) / kBitsPerWord + 1, 0);
  mask[static_cast<size_t>(node) / kBitsPerWord] |= 1UL
                                                    << (static_cast<size_t>(node) % kBitsPerWord);
  // maxnode counts bits and the kernel reads one fewer than it is given.
  const unsigned long maxNode = mask.size() * kBitsPerWord + 1;
  if (syscall(SYS_mbind, begin, end - begin, MPOL_PREFERRED, mask.data(), maxNode, 0) != 0) {
    return str("mbind(MPOL_PREFERRED, node ", node, "): ", errnoText(errno));
  }
  return "";
}

int numaNodeOfPage(const void* address) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, const_cast<void*>(address),
              MPOL_F_NODE | MPOL_F_ADDR) != 0) {
    return -1;
  }
  return node;
}

size_t onlineNumaNodes() {
  std::ifstream online("/sys/devices/system/node/online");
  std::string text;
  if (!std::getline(online, text)) return 1;
  return std::max<size_t>(1, entriesInSysfsList(text));
}

}  // namespace hoop
