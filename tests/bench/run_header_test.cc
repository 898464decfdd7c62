#include "run_header.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace hoop::perf {
namespace {

TEST(RunHeader, DescribesTheRun) {
  RunDescription run;
  run.options.collective = Collective::kReduceScatter;
  run.options.minBytes = 8;
  run.options.maxBytes = 1 << 20;
  run.options.stepFactor = 4;
  run.hoopVersion = 10203;
  for (int r = 0; r < 2; ++r) {
    RankInfo info;
    std::strcpy(info.host, r == 0 ? "alpha" : "beta");
    info.pid = 4242 + r;
    info.hardwareThreads = 16;
    run.ranks.push_back(info);
  }
  unsetenv("HOOP_TRANSPORT");
  EXPECT_EQ(formatRunHeader(run),
            "# hoop-perf reducescatter: hoop 1.2.3, 2 ranks\n"
            "# nThread 1 nRanks 2 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 "
            "iters: 20 validation: 1 blocking: 0\n"
            "# Memory: host, time: mean over ranks (-a 1)\n"
            "# Algorithm: ring\n"
            "# Transport: auto (shm to ranks on the same host, tcp to the others)\n"
            "#\n"
            "# Using ranks\n"
            "#  Rank  0 Pid   4242 on      alpha hw threads  16\n"
            "#  Rank  1 Pid   4243 on       beta hw threads  16\n"
            "#\n");
}

TEST(RunHeader, StepInBytesWhenFactorIsOne) {
  RunDescription run;
  run.options.stepFactor = 1;
  run.options.stepBytes = 1 << 20;
  run.ranks.resize(1);
  EXPECT_NE(formatRunHeader(run).find(" step: 1048576(bytes) "), std::string::npos);
}

}  // namespace
}  // namespace hoop::perf
