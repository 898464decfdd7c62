// NUMA placement of memory through the kernel's policy calls, on this machine's real nodes.
#include "topology/memory_binding.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace hoop {
namespace {

// A shared mapping, like a shared-memory segment: the policy must hold for its pages.
struct SharedPages {
  explicit SharedPages(size_t bytes) : size(bytes) {
    data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }
  ~SharedPages() {
    if (data != MAP_FAILED) munmap(data, size);
  }
  void* data;
  size_t size;
};

TEST(MemoryBinding, TouchedPagesComeFromThePreferredNode) {
  ASSERT_GE(onlineNumaNodes(), 1u);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  SharedPages pages(8 * page);
  ASSERT_NE(pages.data, MAP_FAILED);
  // An unaligned range inside: widened to whole pages.
  EXPECT_EQ(preferNumaNode(static_cast<char*>(pages.data) + 100, 3 * page, 0), "");
  std::memset(pages.data, 1, pages.size);
  EXPECT_EQ(numaNodeOfPage(pages.data), 0);
  EXPECT_EQ(numaNodeOfPage(static_cast<char*>(pages.data) + 3 * page), 0);
}

TEST(MemoryBinding, ANodeThatDoesNotExistIsExplainedNotFatal) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  SharedPages pages(page);
  ASSERT_NE(pages.data, MAP_FAILED);
  const std::string refused = preferNumaNode(pages.data, page, 200);
  EXPECT_NE(refused.find("mbind(MPOL_PREFERRED, node 200)"), std::string::npos) << refused;
  EXPECT_NE(preferNumaNode(pages.data, page, -1), "");
  EXPECT_EQ(preferNumaNode(pages.data, 0, 0), "");
}

}  // namespace
}  // namespace hoop
