#include "json_report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "report_rows.h"

namespace hoop::perf {
namespace {

using testing::row;

RunDescription twoRankRun() {
  RunDescription run;
  run.options.collective = Collective::kAllReduce;
  run.options.minBytes = 8;
  run.options.maxBytes = 1024;
  run.options.stepFactor = 4;
  run.options.types = {hoopFloat, hoopHalf};
  run.options.ops = {hoopSum, hoopMax};
  run.options.algo = "all";
  run.hoopVersion = 10203;
  run.algorithm = "ring, direct (--algo all: one table each)";
  for (int r = 0; r < 2; ++r) {
    RankInfo info;
    std::strcpy(info.host, r == 0 ? "alpha\"1" : "beta");
    info.pid = 100 + r;
    info.hardwareThreads = 8;
    run.ranks.push_back(info);
  }
  return run;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(JsonReport, DescribesTheRun) {
  unsetenv("HOOP_TRANSPORT");  // the run-level transport then reads "auto"
  const std::string json = formatJsonReport(twoRankRun(), {}, {});
  for (const char* part : {
           "\n  \"format\": \"hoop-perf\",\n  \"format_version\": 1,\n",
           "\n  \"hoop_version\": \"1.2.3\",\n  \"hoop_version_code\": 10203,\n",
           "\n  \"collective\": \"allreduce\",\n  \"nranks\": 2,\n  \"nhosts\": 2,\n",
           "\n  \"hosts\": [\n    \"alpha\\\"1\",\n    \"beta\"\n  ],\n",
           "\n    {\n      \"rank\": 1,\n      \"host\": \"beta\",\n      \"pid\": 101,\n"
           "      \"hardware_threads\": 8\n    }\n",
           "\n  \"memory\": \"host\",\n  \"device\": null,\n  \"device_emulated\": false,\n"
           "  \"transport\": \"auto\",\n  \"threads_per_rank\": 1,\n",
           "\n  \"iters\": 20,\n  \"warmup_iters\": 5,\n  \"check\": true,\n  \"blocking\": "
           "false,\n",
           "\n  \"min_bytes\": 8,\n  \"max_bytes\": 1024,\n  \"step_factor\": 4,\n",
           "\n  \"average\": \"mean\",\n  \"average_mode\": 1,\n  \"root\": -1,\n",
           "\n  \"datatypes\": [\n    \"float\",\n    \"half\"\n  ],\n",
           "\n  \"ops\": [\n    \"sum\",\n    \"max\"\n  ],\n",
           "\n  \"algo_option\": \"all\",\n",
           "\n  \"algorithm\": \"ring, direct (--algo all: one table each)\",\n",
           "\n  \"busbw_factor\": 1,\n",
           "\n  \"tables\": [],\n  \"rows\": []\n}\n",
       }) {
    EXPECT_TRUE(contains(json, part)) << "missing:\n" << part << "\nin:\n" << json;
  }
}

TEST(JsonReport, OneRecordPerRowWithBothPlacements) {
  const std::string json =
      formatJsonReport(twoRankRun(), {{"ring", 1, 0, 3.0}}, {row("ring", 1024, 3.0)});
  EXPECT_TRUE(contains(json,
                       "\n  \"tables\": [\n    {\n      \"algorithm\": \"ring\",\n"
                       "      \"rows\": 1,\n      \"wrong_total\": 0,\n"
                       "      \"avg_busbw_gbs\": 3\n    }\n  ],\n"))
      << json;
  EXPECT_TRUE(contains(json,
                       "\n  \"rows\": [\n"
                       "    {\n"
                       "      \"collective\": \"allreduce\",\n"
                       "      \"algorithm\": \"ring\",\n"
                       "      \"transport\": \"tcp\",\n"
                       "      \"memory\": \"host\",\n"
                       "      \"size_bytes\": 1024,\n"
                       "      \"count\": 256,\n"
                       "      \"type\": \"float\",\n"
                       "      \"redop\": \"sum\",\n"
                       "      \"root\": -1,\n"
                       "      \"out_of_place\": {\n"
                       "        \"time_us\": 10.5,\n"
                       "        \"algbw_gbs\": 1.5,\n"
                       "        \"busbw_gbs\": 3,\n"
                       "        \"wrong\": 0,\n"
                       "        \"median_us\": 10,\n"
                       "        \"p99_us\": 14.5,\n"
                       "        \"min_us\": 9.5,\n"
                       "        \"max_us\": 18.5\n"
                       "      },\n"
                       "      \"in_place\": {\n"
                       "        \"time_us\": 12.25,\n"))
      << json;
}

TEST(JsonReport, UncheckedRunsHaveNullWrong) {
  RunDescription run = twoRankRun();
  run.options.check = false;
  run.options.algo.clear();
  RowResult r = row("direct", 8, 1.0);
  r.outOfPlace.wrong.reset();
  r.inPlace.wrong.reset();
  const std::string json = formatJsonReport(run, {{"auto", 1, 0, 1.0}}, {r});
  EXPECT_TRUE(contains(json, "\"check\": false")) << json;
  EXPECT_TRUE(contains(json, "\"algo_option\": null")) << json;
  EXPECT_TRUE(contains(json, "\"wrong_total\": null")) << json;
  EXPECT_TRUE(contains(json, "\"wrong\": null")) << json;
  EXPECT_FALSE(contains(json, "\"wrong\": 0")) << json;
}

TEST(JsonReport, RootAndOpsFollowTheCollective) {
  RunDescription run = twoRankRun();
  run.options.collective = Collective::kBroadcast;
  run.options.root = 1;
  std::string json = formatJsonReport(run, {}, {});
  EXPECT_TRUE(contains(json, "\"root\": 1,")) << json;
  EXPECT_TRUE(contains(json, "\"ops\": [\n    \"none\"\n  ]")) << json;
  run.options.collective = Collective::kAllGather;
  json = formatJsonReport(run, {}, {});
  EXPECT_TRUE(contains(json, "\"root\": -1,")) << json;
  EXPECT_TRUE(contains(json, "\"busbw_factor\": 0.5,")) << json;
}

}  // namespace
}  // namespace hoop::perf
