#include "options.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "dtype.h"

namespace hoop::perf {
namespace {

ParseResult parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv = {"hoop-perf"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parseOptions(static_cast<int>(argv.size()), argv.data());
}

Options parseOk(std::initializer_list<const char*> args) {
  const ParseResult result = parse(args);
  EXPECT_EQ(result.action, ParseResult::Action::kRun) << result.error;
  return result.options;
}

std::string parseError(std::initializer_list<const char*> args) {
  const ParseResult result = parse(args);
  EXPECT_EQ(result.action, ParseResult::Action::kError);
  return result.error;
}

TEST(Options, DefaultsAreNcclTests) {
  const Options o = parseOk({"allreduce"});
  EXPECT_EQ(o.collective, Collective::kAllReduce);
  EXPECT_EQ(o.minBytes, 32u << 20);
  EXPECT_EQ(o.maxBytes, 32u << 20);
  EXPECT_EQ(o.stepFactor, 2u);
  EXPECT_EQ(o.stepBytes, 1u << 20);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmupIters, 5);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.types, std::vector<hoopDataType_t>{hoopFloat});
  EXPECT_EQ(o.ops, std::vector<hoopRedOp_t>{hoopSum});
  EXPECT_EQ(o.root, 0);
  EXPECT_FALSE(o.blocking);
  EXPECT_EQ(o.average, AverageMode::kMean);
  EXPECT_EQ(o.memory, MemoryKind::kHost);
}

TEST(Options, EveryCollective) {
  EXPECT_EQ(parseOk({"allgather"}).collective, Collective::kAllGather);
  EXPECT_EQ(parseOk({"broadcast"}).collective, Collective::kBroadcast);
  EXPECT_EQ(parseOk({"reduce"}).collective, Collective::kReduce);
  EXPECT_EQ(parseOk({"reducescatter"}).collective, Collective::kReduceScatter);
  EXPECT_EQ(parseOk({"sendrecv"}).collective, Collective::kSendRecv);
  EXPECT_EQ(parseOk({"alltoall"}).collective, Collective::kAllToAll);
}

TEST(Options, ShortFlags) {
  const Options o =
      parseOk({"reduce", "-b", "8",  "-e",   "1M", "-f",  "4",  "-i", "64K", "-n", "7",  "-w", "0",
               "-c",     "0",  "-d", "int8", "-o", "max", "-r", "3",  "-z",  "1",  "-a", "3"});
  EXPECT_EQ(o.minBytes, 8u);
  EXPECT_EQ(o.maxBytes, 1u << 20);
  EXPECT_EQ(o.stepFactor, 4u);
  EXPECT_EQ(o.stepBytes, 64u << 10);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmupIters, 0);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.types, std::vector<hoopDataType_t>{hoopInt8});
  EXPECT_EQ(o.ops, std::vector<hoopRedOp_t>{hoopMax});
  EXPECT_EQ(o.root, 3);
  EXPECT_TRUE(o.blocking);
  EXPECT_EQ(o.average, AverageMode::kMax);
}

TEST(Options, LongFlagsWithSpaceOrEquals) {
  const Options o = parseOk({"allreduce", "--minbytes", "1K", "--maxbytes=1G", "--stepfactor=8",
                             "--iters", "3", "--warmup_iters=1", "--check=0", "--datatype",
                             "bfloat16", "--op=avg", "--average", "2", "--memory", "host"});
  EXPECT_EQ(o.minBytes, 1024u);
  EXPECT_EQ(o.maxBytes, 1u << 30);
  EXPECT_EQ(o.stepFactor, 8u);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.warmupIters, 1);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.types, std::vector<hoopDataType_t>{hoopBfloat16});
  EXPECT_EQ(o.ops, std::vector<hoopRedOp_t>{hoopAvg});
  EXPECT_EQ(o.average, AverageMode::kMin);
}

TEST(Options, MinimumSecondsEitherWay) {
  EXPECT_EQ(parseOk({"allreduce"}).minSeconds, 0.0);
  EXPECT_EQ(parseOk({"allreduce", "-m", "0.25"}).minSeconds, 0.25);
  EXPECT_EQ(parseOk({"allreduce", "--min_seconds=2"}).minSeconds, 2.0);
}

TEST(Options, AttachedShortValues) {
  const Options o = parseOk({"allreduce", "-b8", "-e64K", "-dhalf"});
  EXPECT_EQ(o.minBytes, 8u);
  EXPECT_EQ(o.maxBytes, 64u << 10);
  EXPECT_EQ(o.types, std::vector<hoopDataType_t>{hoopHalf});
}

TEST(Options, AllTypesAndOpsInNcclTestsOrder) {
  const Options o = parseOk({"allreduce", "-d", "all", "-o", "all"});
  EXPECT_EQ(o.types, (std::vector<hoopDataType_t>{hoopInt8, hoopUint8, hoopInt32, hoopUint32,
                                                  hoopInt64, hoopUint64, hoopHalf, hoopFloat,
                                                  hoopDouble, hoopBfloat16}));
  EXPECT_EQ(o.ops, (std::vector<hoopRedOp_t>{hoopSum, hoopProd, hoopMax, hoopMin, hoopAvg}));
}

TEST(Options, EveryTypeNameParses) {
  for (const char* name : {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
                           "double", "bfloat16"}) {
    const Options o = parseOk({"allreduce", "-d", name});
    ASSERT_EQ(o.types.size(), 1u);
    EXPECT_EQ(typeName(o.types[0]), name);
  }
}

TEST(Options, LaterFlagWins) { EXPECT_EQ(parseOk({"allreduce", "-n", "3", "-n", "9"}).iters, 9); }

TEST(Options, StepBytesWithFactorOne) {
  const Options o = parseOk({"allreduce", "-b", "1M", "-e", "4M", "-f", "1", "-i", "1M"});
  EXPECT_EQ(o.stepFactor, 1u);
  EXPECT_EQ(o.stepBytes, 1u << 20);
}

TEST(Options, Help) {
  EXPECT_EQ(parse({"-h"}).action, ParseResult::Action::kHelp);
  EXPECT_EQ(parse({"--help"}).action, ParseResult::Action::kHelp);
  EXPECT_EQ(parse({"allreduce", "-b", "8", "-h"}).action, ParseResult::Action::kHelp);
  EXPECT_NE(usageText().find("Usage: hoop-perf <collective> [options]"), std::string::npos);
}

TEST(Options, CollectiveErrors) {
  EXPECT_NE(parseError({}).find("no collective"), std::string::npos);
  EXPECT_NE(parseError({"alltoallv"}).find("unknown collective 'alltoallv'"), std::string::npos);
  EXPECT_NE(parseError({"allgatherv"}).find("unknown collective 'allgatherv'"), std::string::npos);
  EXPECT_NE(parseError({"-b", "8", "allreduce"}).find("the collective comes first"),
            std::string::npos);
}

TEST(Options, FlagErrors) {
  EXPECT_EQ(parseError({"allreduce", "-x", "1"}), "unknown option '-x' (see hoop-perf -h)");
  EXPECT_EQ(parseError({"allreduce", "--jsonl"}), "unknown option '--jsonl' (see hoop-perf -h)");
  EXPECT_EQ(parseError({"allreduce", "--json"}), "option '--json' needs a value");
  EXPECT_EQ(parseError({"allreduce", "extra"}), "unexpected argument 'extra' (see hoop-perf -h)");
  EXPECT_EQ(parseError({"allreduce", "-b"}), "option '-b' needs a value");
  EXPECT_EQ(parseError({"allreduce", "--help=1"}), "option '--help=1' takes no value");
}

TEST(Options, ValueErrors) {
  EXPECT_EQ(parseError({"allreduce", "-b", "8X"}),
            "-b: '8X' is not a size (bytes, optional K, M or G suffix)");
  EXPECT_EQ(parseError({"allreduce", "--maxbytes=-1"}),
            "--maxbytes: '-1' is not a size (bytes, optional K, M or G suffix)");
  EXPECT_EQ(parseError({"allreduce", "-n", "0"}),
            "-n: '0' is not a whole number from 1 to 1000000000");
  EXPECT_EQ(parseError({"allreduce", "-f", "0"}),
            "-f: '0' is not a whole number from 1 to 1048576");
  EXPECT_EQ(parseError({"allreduce", "-w", "two"}),
            "-w: 'two' is not a whole number from 0 to 1000000000");
  EXPECT_EQ(parseError({"allreduce", "-r", "-1"}),
            "-r: '-1' is not a whole number from 0 to 1000000000");
  EXPECT_EQ(parseError({"allreduce", "-a", "4"}), "-a: '4' is not a whole number from 0 to 3");
  for (const char* bad : {"-1", "x", "3601", "0.2s", "", "nan"}) {
    EXPECT_EQ(parseError({"allreduce", "-m", bad}),
              std::string("-m: '") + bad + "' is not a number of seconds from 0 to 3600");
  }
  EXPECT_EQ(parseError({"allreduce", "-c", "yes"}), "-c: 'yes' is not 0 or 1");
  EXPECT_EQ(parseError({"allreduce", "-z", "2"}), "-z: '2' is not 0 or 1");
  EXPECT_NE(parseError({"allreduce", "-d", "fp8"}).find("unknown datatype 'fp8'"),
            std::string::npos);
  EXPECT_NE(parseError({"allreduce", "-o", "xor"}).find("unknown op 'xor'"), std::string::npos);
  EXPECT_EQ(parseError({"allreduce", "--memory=disk"}),
            "--memory: unknown memory 'disk'; use host or device (cuda)");
}

TEST(Options, MemoryDeviceAndItsCudaAlias) {
  EXPECT_EQ(parseOk({"allreduce", "--memory", "device"}).memory, MemoryKind::kDevice);
  EXPECT_EQ(parseOk({"allreduce", "--memory=cuda"}).memory, MemoryKind::kDevice);
  EXPECT_EQ(parseOk({"allreduce", "--memory", "host"}).memory, MemoryKind::kHost);
  EXPECT_STREQ(memoryName(MemoryKind::kDevice), "device");
  EXPECT_STREQ(memoryName(MemoryKind::kHost), "host");
}

TEST(Options, OutputFiles) {
  const Options none = parseOk({"allreduce"});
  EXPECT_EQ(none.jsonPath, "");
  EXPECT_EQ(none.csvPath, "");
  EXPECT_EQ(none.plotPath, "");
  const Options o =
      parseOk({"allreduce", "--json", "r.json", "--csv=out/r.csv", "--plot", "/tmp/r.svg"});
  EXPECT_EQ(o.jsonPath, "r.json");
  EXPECT_EQ(o.csvPath, "out/r.csv");
  EXPECT_EQ(o.plotPath, "/tmp/r.svg");
  EXPECT_EQ(parseError({"allreduce", "--csv="}), "--csv: needs a file name");
  EXPECT_NE(usageText().find("--plot <file.svg>"), std::string::npos);
}

TEST(Options, Algo) {
  EXPECT_EQ(parseOk({"allreduce"}).algo, "");
  EXPECT_EQ(parseOk({"allreduce", "--algo", "ring"}).algo, "ring");
  EXPECT_EQ(parseOk({"allreduce", "--algo=direct"}).algo, "direct");
  EXPECT_EQ(parseOk({"allreduce", "--algo", "all"}).algo, "all");
  EXPECT_EQ(parseOk({"allgather", "--algo", "ring"}).algo, "ring");
  EXPECT_EQ(parseOk({"reduce", "--algo", "ring"}).algo, "ring");
  EXPECT_EQ(parseOk({"sendrecv", "--algo", "all"}).algo, "all");
  EXPECT_EQ(parseError({"allreduce", "--algo", "bruck"}),
            "--algo: unknown allreduce schedule 'bruck'; use ring, direct, oneshot, twoshot, "
            "recdoubling, rabenseifner, tree, hierarchical, all or auto");
  // The check needs the collective, whichever order the flags come in.
  EXPECT_EQ(parseError({"reducescatter", "--algo", "direct"}),
            "--algo: reducescatter has one schedule, ring, not 'direct'; use ring, all or auto");
  EXPECT_EQ(parseError({"reduce", "--algo=chain"}),
            "--algo: unknown reduce schedule 'chain'; use ring, tree, all or auto");
  EXPECT_EQ(parseError({"allreduce", "--algo="}), "--algo: needs a schedule name, all or auto");
  EXPECT_EQ(parseOk({"allreduce", "--algo", "auto,all"}).algo, "auto,all");
  EXPECT_EQ(parseError({"allreduce", "--algo", "auto,bruck"}),
            "--algo: unknown allreduce schedule 'bruck'; use ring, direct, oneshot, twoshot, "
            "recdoubling, rabenseifner, tree, hierarchical, all or auto");
}

// --interleave takes no value and needs two tables or more.
TEST(Options, Interleave) {
  EXPECT_FALSE(parseOk({"allreduce", "--algo", "all"}).interleave);
  EXPECT_TRUE(parseOk({"allreduce", "--algo", "auto,all", "--interleave"}).interleave);
  EXPECT_TRUE(parseOk({"allreduce", "--interleave", "--algo", "ring,tree"}).interleave);
  const std::string needsTables =
      "--interleave needs two tables or more to take turns: --algo auto,all, say";
  EXPECT_EQ(parseError({"allreduce", "--interleave"}), needsTables);
  EXPECT_EQ(parseError({"allreduce", "--algo", "ring", "--interleave"}), needsTables);
  EXPECT_EQ(parseError({"reducescatter", "--algo", "all", "--interleave"}), needsTables);
  EXPECT_EQ(parseError({"allreduce", "--algo", "all", "--interleave=1"}),
            "option '--interleave=1' takes no value");
}

TEST(Options, CombinationErrors) {
  EXPECT_EQ(parseError({"allreduce", "-b", "1M", "-e", "1K"}),
            "-b (1048576) is larger than -e (1024)");
  EXPECT_NE(parseError({"allreduce", "-b", "8", "-e", "64", "-f", "1", "-i", "0"}).find("-i 0"),
            std::string::npos);
  EXPECT_NE(parseError({"allreduce", "-b", "0", "-e", "64"}).find("-b 0"), std::string::npos);
  // One size needs no step at all.
  EXPECT_EQ(parseOk({"allreduce", "-b", "0", "-e", "0"}).maxBytes, 0u);
}

}  // namespace
}  // namespace hoop::perf
