#include "topology/sysfs_list.h"

#include <gtest/gtest.h>

namespace hoop {
namespace {

TEST(SysfsList, CountsSinglesAndRanges) {
  EXPECT_EQ(entriesInSysfsList("0"), 1u);
  EXPECT_EQ(entriesInSysfsList("0-3"), 4u);
  EXPECT_EQ(entriesInSysfsList("0-3,8,10-11"), 7u);
  EXPECT_EQ(entriesInSysfsList("5,7"), 2u);
}

TEST(SysfsList, NotTheFormatCountsNothing) {
  EXPECT_EQ(entriesInSysfsList(""), 0u);
  EXPECT_EQ(entriesInSysfsList("x"), 0u);
  EXPECT_EQ(entriesInSysfsList("0-x"), 0u);
  EXPECT_EQ(entriesInSysfsList("3-1"), 0u);
  EXPECT_EQ(entriesInSysfsList("0,,2"), 0u);
}

}  // namespace
}  // namespace hoop
