// The job plan: each rank's environment contract, and the ssh command of remote ranks, checked
// word by word and, for quoting, through a real /bin/sh.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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
