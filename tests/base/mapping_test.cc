// Mapping unmaps its range exactly once, whoever owns it last. msync on a range that is no longer
// mapped fails with ENOMEM, which tells an unmapped page from a mapped one.
#include "base/mapping.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hoop {
namespace {

size_t pageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

void* mapPages(size_t bytes) {
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(address, MAP_FAILED);
  return address;
}

bool isMapped(void* address, size_t bytes) {
  errno = 0;
  if (msync(address, bytes, MS_ASYNC) == 0) return true;
  EXPECT_EQ(errno, ENOMEM);
  return false;
}

TEST(Mapping, DestructionUnmaps) {
  const size_t bytes = 2 * pageSize();
  void* address = mapPages(bytes);
  {
    Mapping mapping(address, bytes);
    EXPECT_EQ(mapping.get(), address);
    EXPECT_EQ(mapping.size(), bytes);
    std::memset(mapping.get(), 0x5a, bytes);  // usable while held
  }
  EXPECT_FALSE(isMapped(address, bytes));
}

TEST(Mapping, EmptyHoldsNothing) {
  Mapping none;
  EXPECT_EQ(none.get(), nullptr);
  EXPECT_EQ(none.size(), 0u);
  none.reset();  // nothing to unmap
}

TEST(Mapping, MoveHandsOverWithoutUnmapping) {
  const size_t bytes = pageSize();
  void* address = mapPages(bytes);
  {
    Mapping first(address, bytes);
    Mapping second(std::move(first));
    EXPECT_EQ(first.get(), nullptr);  // NOLINT(bugprone-use-after-move): the point of the test
    EXPECT_EQ(first.size(), 0u);      // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(isMapped(address, bytes));
    Mapping third;
    third = std::move(second);
    EXPECT_EQ(third.get(), address);
    EXPECT_EQ(third.size(), bytes);
    EXPECT_TRUE(isMapped(address, bytes));
  }
  EXPECT_FALSE(isMapped(address, bytes));
}

TEST(Mapping, MoveAssignmentUnmapsWhatWasHeld) {
  const size_t bytes = pageSize();
  void* old = mapPages(bytes);
  void* fresh = mapPages(bytes);
  Mapping mapping(old, bytes);
  mapping = Mapping(fresh, bytes);
  EXPECT_FALSE(isMapped(old, bytes));
  EXPECT_TRUE(isMapped(fresh, bytes));
  mapping.reset();
  EXPECT_FALSE(isMapped(fresh, bytes));
  EXPECT_EQ(mapping.get(), nullptr);
}

}  // namespace
}  // namespace hoop
