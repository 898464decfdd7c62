// hoopCommSplit and the premultiplied sum across real processes (tests/api/api_worker.cc runs
// each rank), every result checked exactly.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker_job.h"

namespace hoop::test {
namespace {

class Split : public ::testing::TestWithParam<int> {};

// Several colors, keys that reverse the order, a rank left out (from 5 ranks), pairs with equal
// keys, a split of a split, and the parent afterwards.
TEST_P(Split, NewCommunicatorsHoldTheRightRanksInTheRightOrder) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "split"}, {}, 120));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Split, ::testing::Values(2, 3, 5, 7));

// The same from a non-blocking parent: the exchange queued behind its calls, the new
// communicators initialised in the background (or at once, when one asks to be blocking).
TEST(SplitNonBlocking, ThreeRanks) {
  expectAllPassed(runWithUniqueId(3, {"--suite", "split", "--nonblocking"}, {}, 120));
}

TEST(SplitMisuse, ABadColorFailsEveryRankNamingItAndLeavesTheParentUsable) {
  expectAllPassed(runWithUniqueId(3, {"--suite", "refused"}, {}, 120));
}

TEST(SplitMisuse, ARankThatNeverCallsTimesTheOthersOut) {
  expectAllPassed(runWithUniqueId(3, {"--suite", "missing"}, {{"HOOP_TIMEOUT", "2"}}, 60));
}

class PreMulSum : public ::testing::TestWithParam<int> {};

TEST_P(PreMulSum, EveryReductionAndDatatypeOnHostMemoryIsExact) {
  expectAllPassed(runWithUniqueId(GetParam(), {"--suite", "premulsum"}, {}, 120));
}

INSTANTIATE_TEST_SUITE_P(Ranks, PreMulSum, ::testing::Values(2, 3));

}  // namespace
}  // namespace hoop::test
