#include "algorithm.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace hoop::perf {
namespace {

using Tables = std::vector<std::optional<std::string>>;

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(Algorithm, SchedulesPerCollective) {
  EXPECT_EQ(schedulesOf(Collective::kAllReduce),
            (std::vector<std::string_view>{"ring", "direct", "oneshot", "twoshot", "recdoubling",
                                           "rabenseifner", "tree", "hierarchical"}));
  EXPECT_EQ(schedulesOf(Collective::kAllGather),
            (std::vector<std::string_view>{"ring", "bruck", "hierarchical"}));
  EXPECT_EQ(schedulesOf(Collective::kReduceScatter), std::vector<std::string_view>{"ring"});
  EXPECT_EQ(schedulesOf(Collective::kBroadcast),
            (std::vector<std::string_view>{"ring", "tree", "hierarchical"}));
  EXPECT_EQ(schedulesOf(Collective::kReduce), (std::vector<std::string_view>{"ring", "tree"}));
  EXPECT_EQ(schedulesOf(Collective::kSendRecv), std::vector<std::string_view>{"grouped"});
  EXPECT_EQ(schedulesOf(Collective::kAllToAll), std::vector<std::string_view>{"pairwise"});
  EXPECT_FALSE(scheduleCanBeForced(Collective::kAllToAll));
  EXPECT_TRUE(scheduleCanBeForced(Collective::kAllReduce));
  EXPECT_TRUE(scheduleCanBeForced(Collective::kAllGather));
  EXPECT_TRUE(scheduleCanBeForced(Collective::kReduce));
  EXPECT_FALSE(scheduleCanBeForced(Collective::kReduceScatter));
}

TEST(Algorithm, AlgoOptionChecks) {
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "ring"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "direct"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "all"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllGather, "ring"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kSendRecv, "all"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "bruck"),
            "--algo: unknown allreduce schedule 'bruck'; use ring, direct, oneshot, twoshot, "
            "recdoubling, rabenseifner, tree, hierarchical, all or auto");
  EXPECT_EQ(checkAlgoOption(Collective::kReduceScatter, "direct"),
            "--algo: reducescatter has one schedule, ring, not 'direct'; use ring, all or auto");
  EXPECT_EQ(checkAlgoOption(Collective::kAllToAll, "pairwise"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllToAll, "ring"),
            "--algo: alltoall has one schedule, pairwise, not 'ring'; use pairwise, all or auto");
  EXPECT_EQ(checkAlgoOption(Collective::kReduce, "chain"),
            "--algo: unknown reduce schedule 'chain'; use ring, tree, all or auto");
  // Lists: every entry is checked, an empty one too.
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "auto,all"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kAllReduce, "auto,ring,tree"), "");
  EXPECT_EQ(checkAlgoOption(Collective::kReduce, "ring,chain"),
            "--algo: unknown reduce schedule 'chain'; use ring, tree, all or auto");
  EXPECT_EQ(checkAlgoOption(Collective::kReduce, "ring,"),
            "--algo: unknown reduce schedule ''; use ring, tree, all or auto");
}

TEST(Algorithm, TablesPerAlgoOption) {
  EXPECT_EQ(tableAlgorithms(Collective::kAllReduce, ""), Tables{std::nullopt});
  EXPECT_EQ(tableAlgorithms(Collective::kAllReduce, "direct"), Tables{"direct"});
  EXPECT_EQ(tableAlgorithms(Collective::kAllReduce, "all"),
            (Tables{"ring", "direct", "oneshot", "twoshot", "recdoubling", "rabenseifner", "tree",
                    "hierarchical"}));
  EXPECT_EQ(tableAlgorithms(Collective::kReduce, "all"), (Tables{"ring", "tree"}));
  EXPECT_EQ(tableAlgorithms(Collective::kReduceScatter, "all"), Tables{"ring"});
  EXPECT_EQ(tableAlgorithms(Collective::kAllToAll, "all"), Tables{"pairwise"});
  // A list: one table per entry, in order; "auto" is hoop's own choice beside forced ones.
  EXPECT_EQ(tableAlgorithms(Collective::kReduce, "auto,all"), (Tables{"auto", "ring", "tree"}));
  EXPECT_EQ(tableAlgorithms(Collective::kAllReduce, "tree,auto"), (Tables{"tree", "auto"}));
}

}  // namespace
}  // namespace hoop::perf
