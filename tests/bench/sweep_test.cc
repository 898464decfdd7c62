#include "sweep.h"

#include <gtest/gtest.h>

#include <vector>

namespace hoop::perf {
namespace {

std::vector<size_t> turns(size_t row, size_t tables) {
  std::vector<size_t> order;
  for (size_t k = 0; k < tables; ++k) order.push_back(tableInTurn(row, k, tables));
  return order;
}

// Every row runs every table once, and each row opens with the next table.
TEST(Sweep, InterleavedRowsTakeEveryTableOnceOpeningInTurn) {
  EXPECT_EQ(turns(0, 3), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(turns(1, 3), (std::vector<size_t>{1, 2, 0}));
  EXPECT_EQ(turns(2, 3), (std::vector<size_t>{2, 0, 1}));
  EXPECT_EQ(turns(3, 3), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(turns(5, 1), (std::vector<size_t>{0}));
}

}  // namespace
}  // namespace hoop::perf
