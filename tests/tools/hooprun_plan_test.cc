// The job plan: each rank's environment contract, and the ssh command of remote ranks, checked
// word by word and, for quoting, through a real /bin/sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "hooprun/cpu_binding.h"
#include "hooprun/job_plan.h"
#include "hooprun/launch_context.h"
#include "hooprun/remote_command.h"

namespace hoop::run {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kSecret = "0123456789abcdef0123456789abcdef";

LaunchContext fixedContext() {
  LaunchContext ctx;
  ctx.secret = kSecret;
  ctx.root_port = 29500;
  ctx.environ = {"PATH=/usr/bin:/bin", "HOME=/home/u", "HOOP_RANK=stale", "KEEP=1"};
  ctx.cwd = "/work/my job";
  ctx.rsh = {"ssh", "-o", "BatchMode=yes"};
  ctx.local_hostname = "launchhost";
  return ctx;
}

Options options(size_t n, std::vector<HostSlots> hosts = {}, std::vector<EnvVar> exports = {}) {
  Options o;
  o.num_ranks = n;
  o.hosts = std::move(hosts);
  o.exports = std::move(exports);
  o.program = {"./train", "--lr", "0.1"};
  return o;
}

// The value of NAME in a NAME=value list; "<unset>" when absent, "<twice>" when duplicated.
std::string valueOf(const std::vector<std::string>& env, const std::string& name) {
  std::string found = "<unset>";
  int count = 0;
  for (const std::string& e : env) {
    if (e.rfind(name + "=", 0) == 0) {
      found = e.substr(name.size() + 1);
      ++count;
    }
  }
  return count > 1 ? "<twice>" : found;
}

TEST(HooprunPlan, SingleHostEnvironmentContract) {
  JobPlan plan = planJob(options(3, {}, {{"FOO", "bar"}}), fixedContext());
  EXPECT_EQ(plan.root_addr, "127.0.0.1:29500");
  ASSERT_EQ(plan.ranks.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    const RankLaunch& launch = plan.ranks[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(launch.rank, r);
    EXPECT_EQ(launch.host, "localhost");
    EXPECT_FALSE(launch.remote);
    EXPECT_THAT(launch.argv, ElementsAre("./train", "--lr", "0.1"));
    EXPECT_EQ(launch.stdin_data, "") << "local ranks read /dev/null";
    EXPECT_EQ(valueOf(launch.env, "HOOP_RANK"), std::to_string(r)) << "replaces the stale one";
    EXPECT_EQ(valueOf(launch.env, "HOOP_SIZE"), "3");
    EXPECT_EQ(valueOf(launch.env, "HOOP_LOCAL_RANK"), std::to_string(r));
    EXPECT_EQ(valueOf(launch.env, "HOOP_LOCAL_SIZE"), "3");
    EXPECT_EQ(valueOf(launch.env, "HOOP_ROOT_ADDR"), "127.0.0.1:29500");
    EXPECT_EQ(valueOf(launch.env, "HOOP_SECRET"), kSecret);
    EXPECT_EQ(valueOf(launch.env, "HOOP_LAUNCHER"), "hooprun");
    EXPECT_EQ(valueOf(launch.env, "FOO"), "bar");
    EXPECT_EQ(valueOf(launch.env, "KEEP"), "1") << "the launcher's environment is inherited";
    EXPECT_EQ(valueOf(launch.env, "PATH"), "/usr/bin:/bin");
    for (const std::string& word : launch.argv) EXPECT_THAT(word, Not(HasSubstr(kSecret)));
  }
}

TEST(HooprunPlan, LocalhostEntriesStayOnThisHost) {
  Options o = options(2, {{"localhost", 4}});
  EXPECT_TRUE(runsOnThisHostOnly(o));
  JobPlan plan = planJob(o, fixedContext());
  EXPECT_EQ(plan.root_addr, "127.0.0.1:29500");
  EXPECT_FALSE(plan.ranks[1].remote);
  EXPECT_FALSE(runsOnThisHostOnly(options(2, {{"localhost", 1}, {"b", 1}})));
}

TEST(HooprunPlan, RemoteRanksGoThroughSshWithTheSecretOnStdin) {
  JobPlan plan = planJob(options(3, {{"a", 2}, {"b", 2}}, {{"FOO", "x y"}}), fixedContext());
  EXPECT_EQ(plan.root_addr, "a:29500") << "the first host's name";
  ASSERT_EQ(plan.ranks.size(), 3u);

  const RankLaunch& r2 = plan.ranks[2];
  EXPECT_TRUE(r2.remote);
  EXPECT_EQ(r2.host, "b");
  EXPECT_THAT(r2.argv, ElementsAre("ssh", "-o", "BatchMode=yes", "b",
                                   "cd '/work/my job' 2>/dev/null; read -r HOOP_SECRET && export "
                                   "HOOP_SECRET && exec env 'FOO=x y' HOOP_RANK=2 HOOP_SIZE=3 "
                                   "HOOP_LOCAL_RANK=0 HOOP_LOCAL_SIZE=1 HOOP_ROOT_ADDR=a:29500 "
                                   "HOOP_LAUNCHER=hooprun ./train --lr 0.1"));
  EXPECT_EQ(r2.stdin_data, std::string(kSecret) + "\n");
  EXPECT_EQ(r2.env, fixedContext().environ) << "the ssh client keeps the launcher's environment";
  EXPECT_THAT(plan.ranks[1].argv[4], HasSubstr("HOOP_LOCAL_RANK=1 HOOP_LOCAL_SIZE=2"));
  for (const RankLaunch& launch : plan.ranks) {
    // ps shows argv and /proc/PID/environ is readable by the same user only; keep the secret
    // out of both for the ssh client.
    for (const std::string& word : launch.argv) EXPECT_THAT(word, Not(HasSubstr(kSecret)));
    for (const std::string& e : launch.env) EXPECT_THAT(e, Not(HasSubstr(kSecret)));
  }
}

TEST(HooprunPlan, LocalFirstHostIsNamedForRemoteRanks) {
  JobPlan plan = planJob(options(2, {{"localhost", 1}, {"b", 1}}), fixedContext());
  EXPECT_EQ(plan.root_addr, "launchhost:29500") << "'localhost' would mean b itself to rank 1";
  EXPECT_FALSE(plan.ranks[0].remote);
  EXPECT_EQ(valueOf(plan.ranks[0].env, "HOOP_SECRET"), kSecret);
  EXPECT_TRUE(plan.ranks[1].remote);
}

TEST(HooprunPlan, HoopRshReplacesSsh) {
  EXPECT_THAT(remoteShellCommand(nullptr), ElementsAre("ssh", "-o", "BatchMode=yes"));
  EXPECT_THAT(remoteShellCommand(" \t"), ElementsAre("ssh", "-o", "BatchMode=yes"));
  EXPECT_THAT(remoteShellCommand("  /bin/sh  /x/fake_rsh.sh "),
              ElementsAre("/bin/sh", "/x/fake_rsh.sh"));
  EXPECT_THAT(remoteArgv({"rsh"}, "h", "script"), ElementsAre("rsh", "h", "script"));
}

// --bind-to core: local rank r gets core r mod cores; ranks on other hosts are not bound (the
// local process is their ssh client).
TEST(HooprunPlan, BindingGivesLocalRanksCoresInTurn) {
  LaunchContext ctx = fixedContext();
  ctx.cores = {{0, 2}, {1, 3}};
  Options o = options(3);
  EXPECT_TRUE(planJob(o, ctx).ranks[0].cpus.empty()) << "no binding unless asked for";
  o.bind_to = Binding::kCore;
  JobPlan plan = planJob(o, ctx);
  EXPECT_THAT(plan.ranks[0].cpus, ElementsAre(0, 2));
  EXPECT_THAT(plan.ranks[1].cpus, ElementsAre(1, 3));
  EXPECT_THAT(plan.ranks[2].cpus, ElementsAre(0, 2)) << "more ranks than cores share in turn";

  Options mixed = options(4, {{"localhost", 2}, {"nodeB", 2}});
  mixed.bind_to = Binding::kCore;
  JobPlan mixedPlan = planJob(mixed, ctx);
  EXPECT_THAT(mixedPlan.ranks[1].cpus, ElementsAre(1, 3));
  EXPECT_TRUE(mixedPlan.ranks[2].cpus.empty());
  EXPECT_TRUE(mixedPlan.ranks[3].cpus.empty());
}

// Hardware threads group into their cores, cores in the order of their first thread.
TEST(HooprunBinding, ThreadsGroupIntoCores) {
  // Two packages of two cores with two threads each, numbered as Linux does: cpu c and c + 4
  // are siblings.
  auto coreOf = [](int cpu) { return std::make_pair((cpu % 4) / 2, cpu % 2); };
  EXPECT_THAT(
      groupIntoCores({7, 0, 4, 1, 5, 2, 6, 3}, coreOf),
      ElementsAre(ElementsAre(0, 4), ElementsAre(1, 5), ElementsAre(2, 6), ElementsAre(3, 7)));
  EXPECT_THAT(groupIntoCores({5, 1}, coreOf), ElementsAre(ElementsAre(1, 5)))
      << "an affinity mask with only some threads keeps only those";
  EXPECT_TRUE(groupIntoCores({}, coreOf).empty());
  EXPECT_TRUE(cpusOfLocalRank({}, 3).empty());
  EXPECT_EQ(cpuListText({0, 4}), "0,4");
}

// This machine: every CPU of the affinity mask is in exactly one core.
TEST(HooprunBinding, UsableCoresCoverTheAffinityMask) {
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  std::vector<int> seen;
  for (const std::vector<int>& core : usableCores()) {
    EXPECT_FALSE(core.empty());
    seen.insert(seen.end(), core.begin(), core.end());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(CPU_COUNT(&mask)));
  EXPECT_TRUE(std::adjacent_find(seen.begin(), seen.end()) == seen.end()) << "a CPU twice";
  for (int cpu : seen) EXPECT_TRUE(CPU_ISSET(cpu, &mask)) << cpu;
}

TEST(HooprunPlan, MergeEnvironmentLastOverrideWins) {
  EXPECT_THAT(
      mergeEnvironment({"A=1", "B=2", "C=3", "NOEQUALS"}, {{"B", "x"}, {"D", "4"}, {"B", "y"}}),
      ElementsAre("A=1", "C=3", "NOEQUALS", "D=4", "B=y"));
}

TEST(HooprunQuote, SafeWordsStayReadable) {
  EXPECT_EQ(shellQuote("abc"), "abc");
  EXPECT_EQ(shellQuote("HOOP_ROOT_ADDR=node-1.x:29500"), "HOOP_ROOT_ADDR=node-1.x:29500");
  EXPECT_EQ(shellQuote("/usr/bin/python3"), "/usr/bin/python3");
  EXPECT_EQ(shellQuote("--lr=0.1,0.2"), "--lr=0.1,0.2");
}

TEST(HooprunQuote, EverythingElseIsSingleQuoted) {
  EXPECT_EQ(shellQuote(""), "''");
  EXPECT_EQ(shellQuote("a b"), "'a b'");
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(shellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(shellQuote("~"), "'~'");
  EXPECT_EQ(shellQuote("=cmd"), "'=cmd'");
  EXPECT_EQ(shellQuote("a;b"), "'a;b'");
}

// Runs `printf '<%s>' WORD...` through /bin/sh with the words quoted by shellQuote.
std::string echoThroughShell(const std::vector<std::string>& words) {
  std::string script = "printf '<%s>'";
  for (const std::string& w : words) script += " " + shellQuote(w);
  std::string command = "/bin/sh -c " + shellQuote(script);
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "<popen failed>";
  std::string out;
  char buffer[256];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  ::pclose(pipe);
  return out;
}

TEST(HooprunQuote, RoundTripsThroughARealShell) {
  std::vector<std::string> words = {"plain",   "two words", "it's",  "\"dq\"", "$HOME", "`id`",
                                    "$(id)",   "a\\b",      "*",     "?",      "~",     "=x",
                                    "a;b|c&d", "",          "\t\n ", "!",      "{a,b}", "'''"};
  std::string expected;
  for (const std::string& w : words) expected += "<" + w + ">";
  EXPECT_EQ(echoThroughShell(words), expected);
}

TEST(HooprunLaunchContext, SecretIs32HexDigitsAndFreshEachTime) {
  std::string a = makeSecret();
  std::string b = makeSecret();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  })) << a;
  EXPECT_NE(a, b);
  const unsigned char bytes[] = {0x00, 0x0f, 0xa5, 0xff};
  EXPECT_EQ(hexEncode(bytes, sizeof(bytes)), "000fa5ff");
}

TEST(HooprunLaunchContext, PicksAPort) {
  EXPECT_NE(pickFreePort(true), 0);
  EXPECT_NE(pickFreePort(false), 0);
}

}  // namespace
}  // namespace hoop::run
