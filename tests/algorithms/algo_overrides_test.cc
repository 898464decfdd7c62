// HOOP_ALGO's grammar: what each rule forces at which size, and errors that name the bad token.
#include "algorithms/algo_overrides.h"

#include <gtest/gtest.h>

#include <string_view>

#include "algorithms/registry.h"
#include "base/error.h"

namespace hoop {
namespace {

// The name of the schedule `rules` force on a call of `kind` moving `bytes`; "" for none.
std::string_view forcedName(const AlgoOverrides& rules, OpKind kind, size_t bytes) {
  const AlgorithmEntry* schedule = rules.forced(kind, bytes);
  return schedule == nullptr ? std::string_view() : schedule->name();
}

TEST(AlgoOverrides, RangesPickPerCollectiveAndSize) {
  const auto overrides =
      AlgoOverrides::parse("allreduce:0-64K=oneshot,64K-1M=direct,1M-=ring;broadcast:=ring");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, 0), "oneshot");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, 65535), "oneshot");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, 65536),
            "direct");  // the upper end is exclusive
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, (1 << 20) - 1), "direct");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, 1 << 20), "ring");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllReduce, SIZE_MAX - 1), "ring");
  EXPECT_EQ(forcedName(overrides, OpKind::kBroadcast, 12345), "ring");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllGather, 12345), "") << "not named: hoop's choice";
}

TEST(AlgoOverrides, GapsAndFirstMatchLeaveOrForce) {
  const auto overrides = AlgoOverrides::parse(" allgather : -4K = ring , 2K-8K=hierarchical ");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllGather, 3000), "ring") << "first rule wins";
  EXPECT_EQ(forcedName(overrides, OpKind::kAllGather, 5000), "hierarchical");
  EXPECT_EQ(forcedName(overrides, OpKind::kAllGather, 8192), "");
}

TEST(AlgoOverrides, BareNameForcesEveryCollectiveThatHasIt) {
  const auto ring = AlgoOverrides::parse("ring");
  for (OpKind kind : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                      OpKind::kBroadcast, OpKind::kReduce}) {
    EXPECT_EQ(forcedName(ring, kind, 100), "ring") << opKindName(kind);
  }
  EXPECT_EQ(forcedName(ring, OpKind::kAllToAll, 100), "") << "alltoall has no ring";
  const auto oneshot = AlgoOverrides::parse("oneshot");
  EXPECT_EQ(forcedName(oneshot, OpKind::kAllReduce, 100), "oneshot");
  EXPECT_EQ(forcedName(oneshot, OpKind::kBroadcast, 100), "");
  EXPECT_TRUE(AlgoOverrides::parse("").empty());
}

std::string errorOf(const char* text) {
  try {
    AlgoOverrides::parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument) << e.what();
    return e.what();
  }
  return "accepted";
}

TEST(AlgoOverrides, BadTokensAreNamedWithWhatWouldFit) {
  struct Case {
    const char* text;
    const char* mentions;
  };
  for (const Case& c : {
           Case{"allreduse:=ring", "'allreduse' is not a collective (allreduce, allgather"},
           Case{"allreduce:=bruck",
                "'bruck' is not a schedule of allreduce (ring, direct, oneshot"},
           Case{"allreduce:0-64K", "'0-64K' has no '=NAME'"},
           Case{"allreduce:64K=ring", "'64K' is not a size range"},
           Case{"allreduce:1Q-=ring", "'1Q' is not a size"},
           Case{"allreduce:64K-64K=ring", "'64K-64K' is an empty range"},
           Case{"broadcast:=oneshot",
                "'oneshot' is not a schedule of broadcast (ring, tree, hierarchical)"},
           Case{"fastest", "'fastest' is no schedule of any collective"},
       }) {
    const std::string message = errorOf(c.text);
    EXPECT_NE(message.find(c.mentions), std::string::npos) << c.text << ": " << message;
    EXPECT_NE(message.find(std::string("HOOP_ALGO='") + c.text + "'"), std::string::npos)
        << message;
  }
}

TEST(AlgorithmRegistry, NamesAreUniquePerCollective) {
  const auto registry = algorithmRegistry();
  for (size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(findAlgorithm(registry[i].kind, registry[i].name()), &registry[i]);
    EXPECT_FALSE(registry[i].logName.empty());
  }
}

}  // namespace
}  // namespace hoop
