// The hooprun command line and host lists: what is accepted, and the exact words of refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "hooprun/hosts.h"
#include "hooprun/options.h"
#include "hooprun/usage_error.h"
#include "scratch_dir.h"

namespace hoop::run {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

EnvLookup fakeEnv(std::map<std::string, std::string> vars = {}) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Options parse(const std::vector<std::string>& args, const EnvLookup& env = fakeEnv()) {
  CommandLine cl = parseCommandLine(args, env);
  EXPECT_EQ(cl.action, Action::kRun);
  return cl.options;
}

// The message of the UsageError that parsing throws; "" when it does not throw.
std::string parseError(const std::vector<std::string>& args, const EnvLookup& env = fakeEnv()) {
  try {
    parseCommandLine(args, env);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(HooprunOptions, RanksAndProgram) {
  Options o = parse({"-np", "4", "prog", "a", "b"});
  EXPECT_EQ(o.num_ranks, 4u);
  EXPECT_THAT(o.program, ElementsAre("prog", "a", "b"));
  EXPECT_TRUE(o.hosts.empty());
  EXPECT_TRUE(o.exports.empty());
  EXPECT_FALSE(o.timeout.has_value());
}

TEST(HooprunOptions, EverySpellingOfTheRankCount) {
  EXPECT_EQ(parse({"-n", "2", "p"}).num_ranks, 2u);
  EXPECT_EQ(parse({"--np", "3", "p"}).num_ranks, 3u);
  EXPECT_EQ(parse({"--np=5", "p"}).num_ranks, 5u);
  EXPECT_EQ(parse({"-np", "2", "-np", "6", "p"}).num_ranks, 6u);  // the last one wins
}

TEST(HooprunOptions, OptionsEndAtTheProgram) {
  Options o = parse({"-np", "2", "prog", "-np", "5", "--help"});
  EXPECT_EQ(o.num_ranks, 2u);
  EXPECT_THAT(o.program, ElementsAre("prog", "-np", "5", "--help"));
}

TEST(HooprunOptions, DoubleDashEndsOptions) {
  Options o = parse({"-np", "1", "--", "-weird-program", "x"});
  EXPECT_THAT(o.program, ElementsAre("-weird-program", "x"));
}

TEST(HooprunOptions, HostsAndTimeout) {
  Options o = parse({"-H", "a:2,b", "--timeout", "1.5", "prog"});
  EXPECT_THAT(o.hosts, ElementsAre(HostSlots{"a", 2}, HostSlots{"b", 1}));
  EXPECT_EQ(o.num_ranks, 3u) << "without -np, every slot";
  EXPECT_EQ(o.timeout, milliseconds(1500));

  Options o2 = parse({"--host=a:2", "--host", "b:1", "-np", "2", "--timeout=0.0001", "prog"});
  EXPECT_THAT(o2.hosts, ElementsAre(HostSlots{"a", 2}, HostSlots{"b", 1}));
  EXPECT_EQ(o2.num_ranks, 2u);
  EXPECT_EQ(o2.timeout, milliseconds(1)) << "a tiny timeout rounds up, never to zero";
}

TEST(HooprunOptions, BindTo) {
  EXPECT_EQ(parse({"-np", "1", "p"}).bind_to, Binding::kNone) << "placement left to the kernel";
  EXPECT_EQ(parse({"--bind-to", "core", "-np", "1", "p"}).bind_to, Binding::kCore);
  EXPECT_EQ(parse({"--bind-to=core", "--bind-to=none", "-np", "1", "p"}).bind_to, Binding::kNone);
  EXPECT_EQ(parseError({"--bind-to", "socket", "-np", "1", "p"}),
            "--bind-to 'socket': give 'core' or 'none'");
  EXPECT_EQ(parseError({"-np", "1", "--bind-to"}), "option --bind-to needs a value");
}

TEST(HooprunOptions, Hostfile) {
  test::ScratchDir scratch;
  std::string path = scratch.write("hosts", "n1 slots=2\nn2:1\n");
  Options o = parse({"--hostfile", path, "prog"});
  EXPECT_THAT(o.hosts, ElementsAre(HostSlots{"n1", 2}, HostSlots{"n2", 1}));
  EXPECT_EQ(o.num_ranks, 3u);
  EXPECT_EQ(parse({"--hostfile=" + path, "-np", "1", "prog"}).hosts.size(), 2u);
}

TEST(HooprunOptions, ExportsTakeValuesOrCopyTheLaunchersOwn) {
  Options o = parse({"-x", "A=1", "-x", "B", "-x", "C=", "-x", "D=x=y", "-np", "1", "p"},
                    fakeEnv({{"B", "from launcher"}}));
  EXPECT_THAT(o.exports, ElementsAre(EnvVar{"A", "1"}, EnvVar{"B", "from launcher"},
                                     EnvVar{"C", ""}, EnvVar{"D", "x=y"}));
}

TEST(HooprunOptions, HelpAndVersion) {
  EXPECT_EQ(parseCommandLine({"-h"}, fakeEnv()).action, Action::kHelp);
  EXPECT_EQ(parseCommandLine({"-np", "2", "--help", "prog"}, fakeEnv()).action, Action::kHelp);
  EXPECT_EQ(parseCommandLine({"--version"}, fakeEnv()).action, Action::kVersion);
  EXPECT_THAT(usageText(), HasSubstr("Usage: hooprun -np N"));
  EXPECT_THAT(usageText(), HasSubstr("HOOP_RSH"));
}

TEST(HooprunOptions, RefusalsSayWhatIsWrong) {
  EXPECT_EQ(parseError({"--frobnicate", "p"}), "unknown option '--frobnicate'");
  EXPECT_EQ(parseError({"-np", "2", "-q", "p"}), "unknown option '-q'");
  EXPECT_EQ(parseError({"-np"}), "option -np needs a value");
  EXPECT_EQ(parseError({"-np", "0", "p"}),
            "-np '0': the number of ranks must be an integer from 1 to 1048576");
  EXPECT_THAT(parseError({"-np", "-1", "p"}), HasSubstr("-np '-1': the number of ranks"));
  EXPECT_THAT(parseError({"-n", "two", "p"}), HasSubstr("-n 'two': the number of ranks"));
  EXPECT_THAT(parseError({"-np", "3x", "p"}), HasSubstr("-np '3x'"));
  EXPECT_EQ(parseError({"-np", "2"}), "no program to run");
  EXPECT_EQ(parseError({"prog"}), "missing -np N (the number of ranks)");
  EXPECT_EQ(parseError({"--help=yes"}), "option --help takes no value");
  EXPECT_EQ(parseError({"--timeout", "0", "-np", "1", "p"}),
            "--timeout '0': give a number of seconds greater than 0");
  EXPECT_THAT(parseError({"--timeout", "soon", "-np", "1", "p"}), HasSubstr("--timeout 'soon'"));
  EXPECT_THAT(parseError({"--timeout", "inf", "-np", "1", "p"}), HasSubstr("--timeout 'inf'"));
}

TEST(HooprunOptions, ExportRefusals) {
  EXPECT_EQ(parseError({"-x", "MISSING", "-np", "1", "p"}),
            "-x MISSING: MISSING is not set in hooprun's environment (use -x MISSING=VALUE)");
  EXPECT_EQ(parseError({"-x", "HOOP_SECRET=abc", "-np", "1", "p"}),
            "-x 'HOOP_SECRET=abc': hooprun sets HOOP_SECRET itself");
  EXPECT_EQ(parseError({"-x", "HOOP_RANK", "-np", "1", "p"}, fakeEnv({{"HOOP_RANK", "3"}})),
            "-x 'HOOP_RANK': hooprun sets HOOP_RANK itself");
  EXPECT_EQ(parseError({"-x", "1X=2", "-np", "1", "p"}), "-x '1X=2': '1X' is not a variable name");
  EXPECT_EQ(parseError({"-x", "=2", "-np", "1", "p"}), "-x '=2': '' is not a variable name");
  EXPECT_EQ(parseError({"-x", "A-B=2", "-np", "1", "p"}),
            "-x 'A-B=2': 'A-B' is not a variable name");
}

TEST(HooprunOptions, HostRefusals) {
  EXPECT_EQ(parseError({"-np", "5", "-H", "a:2,b:2", "p"}),
            "-np 5 needs 5 slots but the hosts offer only 4 (a:2,b:2)");
  test::ScratchDir scratch;
  std::string path = scratch.write("hosts", "n1\n");
  EXPECT_EQ(parseError({"-H", "a", "--hostfile", path, "p"}),
            "give either -H or --hostfile, not both");
  EXPECT_EQ(parseError({"--hostfile", "/nonexistent/hooprun/hosts", "p"}),
            "cannot read hostfile '/nonexistent/hooprun/hosts'");
}

TEST(HooprunOptions, FormatSeconds) {
  EXPECT_EQ(formatSeconds(milliseconds(5000)), "5 s");
  EXPECT_EQ(formatSeconds(milliseconds(500)), "0.5 s");
  EXPECT_EQ(formatSeconds(milliseconds(1250)), "1.25 s");
  EXPECT_EQ(formatSeconds(milliseconds(3001)), "3.001 s");
}

// The message of the UsageError thrown by `f`; "" when it does not throw.
template <typename F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(HooprunHosts, HostList) {
  EXPECT_THAT(parseHostList("a:2,b,c:4"),
              ElementsAre(HostSlots{"a", 2}, HostSlots{"b", 1}, HostSlots{"c", 4}));
  EXPECT_THAT(parseHostList("user@node-1.example.org:3"),
              ElementsAre(HostSlots{"user@node-1.example.org", 3}));
}

TEST(HooprunHosts, RepeatedAndLocalHostsMerge) {
  // A host listed twice gets one contiguous block of ranks and one local numbering.
  EXPECT_THAT(parseHostList("a:1,b:1,a:2"), ElementsAre(HostSlots{"a", 3}, HostSlots{"b", 1}));
  EXPECT_THAT(parseHostList("127.0.0.1:2,localhost"), ElementsAre(HostSlots{"localhost", 3}));
  EXPECT_TRUE(isLocalHostName("localhost"));
  EXPECT_TRUE(isLocalHostName("127.0.0.1"));
  EXPECT_FALSE(isLocalHostName("node1"));
  EXPECT_FALSE(isLocalHostName("127.0.0.2"));
}

TEST(HooprunHosts, HostListRefusals) {
  auto err = [](const char* list) { return errorOf([&] { parseHostList(list); }); };
  EXPECT_EQ(err("a,,b"), "-H 'a,,b': empty host entry");
  EXPECT_EQ(err(""), "-H '': empty host entry");
  EXPECT_EQ(err("a,"), "-H 'a,': empty host entry");
  EXPECT_EQ(err("a:0"), "-H 'a:0': slot count '0' must be an integer from 1 to 1048576");
  EXPECT_EQ(err("a:x"), "-H 'a:x': slot count 'x' must be an integer from 1 to 1048576");
  EXPECT_THAT(err("a:"), HasSubstr("slot count ''"));
  EXPECT_THAT(err("a:2:3"), HasSubstr("slot count '2:3'"));
  EXPECT_THAT(err("a:99999999"), HasSubstr("slot count '99999999'"));
  // A host name that ssh would read as an option must never reach its command line.
  EXPECT_EQ(err("-oProxyCommand=evil:1"),
            "-H '-oProxyCommand=evil:1': '-oProxyCommand=evil' is not a host name (use letters, "
            "digits, '.', '-', '_' or user@host, not starting with '-')");
  EXPECT_THAT(err("a b:1"), HasSubstr("'a b' is not a host name"));
  EXPECT_THAT(err(":2"), HasSubstr("'' is not a host name"));
}

TEST(HooprunHosts, Hostfile) {
  const char* text =
      "# cluster\n"
      "\n"
      "n1 slots=4   # big one\n"
      "  n2:2\n"
      "n3\n"
      "n1 slots=1\r\n"
      "\tn4\tslots=2\t\n";
  EXPECT_THAT(parseHostfile(text, "hosts"), ElementsAre(HostSlots{"n1", 5}, HostSlots{"n2", 2},
                                                        HostSlots{"n3", 1}, HostSlots{"n4", 2}));
  EXPECT_THAT(parseHostfile("n1 slots=2", "hosts"), ElementsAre(HostSlots{"n1", 2}))
      << "no final newline";
}

TEST(HooprunHosts, HostfileRefusalsNameTheLine) {
  auto err = [](const char* text) { return errorOf([&] { parseHostfile(text, "hf"); }); };
  EXPECT_EQ(err("n1\nn2 slots=x\n"),
            "hostfile hf line 2: slot count 'x' must be an integer from 1 to 1048576");
  EXPECT_EQ(err("n1 max_slots=2\n"),
            "hostfile hf line 1: expected 'host slots=N' or 'host:N', got 'n1 max_slots=2'");
  EXPECT_THAT(err("n1 slots=2 extra\n"), HasSubstr("hostfile hf line 1: expected"));
  EXPECT_EQ(err("n1:2 slots=3\n"),
            "hostfile hf line 1: give the slot count once ('host slots=N' or 'host:N')");
  EXPECT_THAT(err("# only\n\n"), "hostfile hf lists no hosts");
  EXPECT_THAT(err(""), "hostfile hf lists no hosts");
  EXPECT_THAT(err("\n\n-evil slots=1\n"), HasSubstr("hostfile hf line 3: '-evil' is not a host"));
  EXPECT_THAT(err("n1:0\n"), HasSubstr("hostfile hf line 1: slot count '0'"));
}

TEST(HooprunHosts, PlacementFillsHostsInOrder) {
  std::vector<HostSlots> hosts = {{"a", 2}, {"b", 2}, {"c", 4}};
  EXPECT_THAT(placeRanks(hosts, 3), ElementsAre(RankPlacement{"a", 0, 2}, RankPlacement{"a", 1, 2},
                                                RankPlacement{"b", 0, 1}))
      << "local size counts the ranks on the host, not its slots";
  EXPECT_THAT(placeRanks(hosts, 5), ElementsAre(RankPlacement{"a", 0, 2}, RankPlacement{"a", 1, 2},
                                                RankPlacement{"b", 0, 2}, RankPlacement{"b", 1, 2},
                                                RankPlacement{"c", 0, 1}));
  EXPECT_EQ(placeRanks(hosts, 8).size(), 8u);
  EXPECT_EQ(errorOf([&] { placeRanks(hosts, 9); }),
            "-np 9 needs 9 slots but the hosts offer only 8 (a:2,b:2,c:4)");
}

}  // namespace
}  // namespace hoop::run
