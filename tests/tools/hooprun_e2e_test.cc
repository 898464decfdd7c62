// End-to-end runs of the built hooprun binary with /bin/sh ranks: output relaying, the
// environment contract, failure and signal handling, timeouts, and the multi-host path through
// HOOP_RSH (fake_rsh.sh runs the "remote" command locally).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hooprun/cpu_binding.h"
#include "hooprun/fd.h"
#include "scratch_dir.h"

extern char** environ;

namespace hoop::run {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;

struct RunResult {
  int exit_code = -1;  // hooprun's exit status; 1000 + N if hooprun itself died of signal N
  std::string out;
  std::string err;
  double seconds = 0;
};

// One hooprun process with its stdout and stderr captured. Its stdin is a pipe this object
// keeps open, so a rank that wrongly inherited it would block reading.
class Hooprun {
 public:
  explicit Hooprun(const std::vector<std::string>& args,
                   const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> argv = {HOOPRUN_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    // The test's own environment, minus anything that would steer hooprun (a stray HOOP_RSH).
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string entry = *e;
      if (entry.rfind("HOOP_", 0) != 0 && entry.rfind("FAKE_RSH_", 0) != 0) env.push_back(entry);
    }
    env.insert(env.end(), extra_env.begin(), extra_env.end());

    Pipe in = makePipe(), out = makePipe(), err = makePipe();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in.read.get(), 0);
    posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
    std::vector<char*> cargv, cenv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    for (std::string& e : env) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    start_ = Clock::now();
    int rc = posix_spawn(&pid_, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      ADD_FAILURE() << "cannot start " << HOOPRUN_BINARY << ": " << rc;
      pid_ = -1;
      return;
    }
    stdin_ = std::move(in.write);
    out_ = std::move(out.read);
    err_ = std::move(err.read);
  }

  ~Hooprun() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // Reads output until stdout holds `count` occurrences of `text` or `limit` passes.
  bool waitForStdout(const std::string& text, size_t count, milliseconds limit) {
    auto deadline = Clock::now() + limit;
    while (occurrences(out_text_, text) < count) {
      if (Clock::now() >= deadline || (!out_ && !err_)) return false;
      pump(20);
    }
    return true;
  }

  void signal(int sig) { ::kill(pid_, sig); }

  // Waits for hooprun to exit and both pipes to close (a leftover rank holding them open counts
  // as a failure to stop it). Kills hooprun after `limit`.
  RunResult finish(milliseconds limit = milliseconds(15000)) {
    RunResult result;
    auto deadline = Clock::now() + limit;
    int status = 0;
    bool exited = false;
    while (!exited || out_ || err_) {
      if (Clock::now() >= deadline) {
        ADD_FAILURE() << "hooprun (or a rank holding its pipes) still running after "
                      << limit.count() << " ms; stdout:\n"
                      << out_text_ << "stderr:\n"
                      << err_text_;
        ::kill(pid_, SIGKILL);
        break;
      }
      if (!exited && ::waitpid(pid_, &status, WNOHANG) == pid_) {
        exited = true;
        result.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
      }
      pump(20);
    }
    if (!exited) {
      ::waitpid(pid_, &status, 0);
      result.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    }
    pid_ = -1;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    result.out = out_text_;
    result.err = err_text_;
    return result;
  }

 private:
  static size_t occurrences(const std::string& haystack, const std::string& needle) {
    size_t count = 0;
    for (size_t pos = haystack.find(needle); pos != std::string::npos;
         pos = haystack.find(needle, pos + needle.size())) {
      ++count;
    }
    return count;
  }

  void pump(int timeout_ms) {
    pollfd fds[2] = {{out_.get(), POLLIN, 0}, {err_.get(), POLLIN, 0}};
    if (::poll(fds, 2, timeout_ms) <= 0) return;
    readInto(fds[0], out_, out_text_);
    readInto(fds[1], err_, err_text_);
  }

  static void readInto(const pollfd& p, UniqueFd& fd, std::string& text) {
    if (!fd || p.revents == 0) return;
    char buffer[65536];
    ssize_t n = ::read(fd.get(), buffer, sizeof(buffer));
    if (n > 0) {
      text.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      fd.reset();
    }
  }

  pid_t pid_ = -1;
  Clock::time_point start_;
  UniqueFd stdin_, out_, err_;
  std::string out_text_, err_text_;
};

RunResult run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  return Hooprun(args, env).finish();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> sortedLines(const std::string& text) {
  std::vector<std::string> out = lines(text);
  std::sort(out.begin(), out.end());
  return out;
}

// HOOP_RSH for the multi-host tests, and a log of what it was asked to run.
std::vector<std::string> fakeRshEnv(const std::string& log) {
  return {std::string("HOOP_RSH=/bin/sh ") + HOOPRUN_FAKE_RSH, "FAKE_RSH_LOG=" + log};
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// True once `pid` no longer runs (gone, or a zombie: a container's init may never reap it).
bool processGone(pid_t pid, milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (true) {
    std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
    size_t paren = stat.rfind(')');
    if (stat.empty() || paren == std::string::npos || paren + 2 >= stat.size()) return true;
    char state = stat[paren + 2];
    if (state == 'Z' || state == 'X') return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(milliseconds(20));
  }
}

// ---------------------------------------------------------------------------------------------

TEST(HooprunE2E, PrefixesEveryLineOnTheRightStream) {
  RunResult r = run({"-np", "3", "/bin/sh", "-c",
                     "echo out $HOOP_RANK; echo err $HOOP_RANK >&2; printf 'a'; sleep 0.1; "
                     "printf 'b\\n'; printf 'no newline'"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      sortedLines(r.out),
      (std::vector<std::string>{"[0] ab", "[0] no newline", "[0] out 0", "[1] ab", "[1] no newline",
                                "[1] out 1", "[2] ab", "[2] no newline", "[2] out 2"}));
  EXPECT_EQ(sortedLines(r.err), (std::vector<std::string>{"[0] err 0", "[1] err 1", "[2] err 2"}));
  // Per rank, the order of lines is kept.
  for (int rank = 0; rank < 3; ++rank) {
    std::string p = "[" + std::to_string(rank) + "] ";
    EXPECT_LT(r.out.find(p + "out"), r.out.find(p + "ab"));
    EXPECT_LT(r.out.find(p + "ab"), r.out.find(p + "no newline"));
  }
}

TEST(HooprunE2E, LinesOfDifferentRanksNeverInterleave) {
  // Lines longer than PIPE_BUF arrive in pieces, and three ranks write at once.
  const std::string script =
      "x=$(printf '%6000s' '' | tr ' ' x); i=0; "
      "while [ $i -lt 60 ]; do echo \"$HOOP_RANK:$x:$HOOP_RANK\"; i=$((i+1)); done";
  RunResult r = run({"-np", "3", "/bin/sh", "-c", script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::regex line_re(R"(\[([0-2])\] ([0-2]):x{6000}:([0-2]))");
  std::map<std::string, int> per_rank;
  size_t bad = 0;
  for (const std::string& line : lines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, line_re) && m[1] == m[2] && m[2] == m[3]) {
      ++per_rank[m[1]];
    } else {
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(per_rank, (std::map<std::string, int>{{"0", 60}, {"1", 60}, {"2", 60}}));
}

TEST(HooprunE2E, EnvironmentContract) {
  auto job = [] {
    return run({"-np", "3", "-x", "FOO=a b", "-x", "FROM_LAUNCHER", "/bin/sh", "-c",
                "echo \"$HOOP_RANK|$HOOP_SIZE|$HOOP_LOCAL_RANK|$HOOP_LOCAL_SIZE|"
                "$HOOP_ROOT_ADDR|$HOOP_SECRET|$HOOP_LAUNCHER|$FOO|$FROM_LAUNCHER|$INHERITED\""},
               {"FROM_LAUNCHER=copied", "INHERITED=yes", "HOOP_SECRET=stale"});
  };
  RunResult r = job();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::regex line_re(
      R"(\[(\d)\] (\d)\|3\|(\d)\|3\|(127\.0\.0\.1:\d+)\|([0-9a-f]{32})\|hooprun\|a b\|copied\|yes)");
  std::set<std::string> ranks, roots, secrets;
  for (const std::string& line : lines(r.out)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << line;
    EXPECT_EQ(m[1], m[2]) << "prefix and HOOP_RANK agree";
    EXPECT_EQ(m[2], m[3]) << "one host: local rank == rank";
    ranks.insert(m[2]);
    roots.insert(m[4]);
    secrets.insert(m[5]);
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(roots.size(), 1u);
  ASSERT_EQ(secrets.size(), 1u) << "one secret per job";

  RunResult again = job();
  EXPECT_THAT(again.out, Not(HasSubstr(*secrets.begin()))) << "a fresh secret for each job";
}

TEST(HooprunE2E, RanksReadAnEmptyStdin) {
  // hooprun's stdin is a pipe the test keeps open: a rank that inherited it would block in cat.
  RunResult r = run({"-np", "2", "/bin/sh", "-c", "cat; echo done"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sortedLines(r.out), (std::vector<std::string>{"[0] done", "[1] done"}));
}

TEST(HooprunE2E, FailingRankStopsTheOthersAndSetsTheExitCode) {
  // The other ranks run `sleep` as a child of their shell: stopping them must reach the
  // grandchild too (hooprun signals each rank's process group), not only the shell.
  test::ScratchDir scratch;
  const std::string& dir = scratch.path();
  RunResult r = run({"-np", "4", "/bin/sh", "-c",
                     "if [ $HOOP_RANK = 2 ]; then sleep 0.3; exit 3; fi; "
                     "sleep 30 & echo $! > " +
                         dir + "/sleep.$HOOP_RANK; wait; echo survived"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_LT(r.seconds, 5.0) << "the sleeping ranks must be stopped, not waited for";
  EXPECT_THAT(r.out, Not(HasSubstr("survived")));
  std::regex message(
      R"(hooprun: rank 2 \(pid \d+, host localhost\) exited with status 3; stopping the other 3 ranks\n)");
  EXPECT_TRUE(std::regex_search(r.err, message)) << r.err;
  for (int rank : {0, 1, 3}) {
    std::string pid_text = readFile(dir + "/sleep." + std::to_string(rank));
    ASSERT_FALSE(pid_text.empty()) << "rank " << rank << " did not start its sleep";
    EXPECT_TRUE(processGone(std::stoi(pid_text), milliseconds(2000)))
        << "rank " << rank << "'s sleep (pid " << pid_text << ") survived the job";
  }
}

TEST(HooprunE2E, RankKilledBySignalIsReported) {
  RunResult r = run({"-np", "2", "/bin/sh", "-c",
                     "if [ $HOOP_RANK = 1 ]; then ulimit -c 0; kill -SEGV $$; fi; sleep 30"});
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV);
  EXPECT_LT(r.seconds, 5.0);
  std::regex message(
      R"(hooprun: rank 1 \(pid \d+, host localhost\) killed by signal 11 \(Segmentation fault\); stopping the other 1 rank\n)");
  EXPECT_TRUE(std::regex_search(r.err, message)) << r.err;
}

TEST(HooprunE2E, AllRanksSucceedingExitsZeroEvenIfTheyEndAtDifferentTimes) {
  RunResult r = run({"-np", "3", "/bin/sh", "-c", "sleep 0.$HOOP_RANK; echo bye"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(lines(r.out).size(), 3u);
}

TEST(HooprunE2E, SigtermIsForwardedToEveryRank) {
  Hooprun job({"-np", "2", "/bin/sh", "-c",
               "trap 'echo got TERM; exit 5' TERM; echo ready; sleep 30 & wait"});
  ASSERT_TRUE(job.waitForStdout("ready", 2, milliseconds(5000)));
  auto sent = Clock::now();
  job.signal(SIGTERM);
  RunResult r = job.finish();
  double after_signal = std::chrono::duration<double>(Clock::now() - sent).count();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_THAT(r.out, HasSubstr("[0] got TERM\n"));
  EXPECT_THAT(r.out, HasSubstr("[1] got TERM\n"));
  EXPECT_THAT(r.err, HasSubstr("hooprun: received SIGTERM; forwarding it to 2 ranks\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("SIGKILL"))) << "they exited within the grace period";
  EXPECT_LT(after_signal, 2.5);
}

TEST(HooprunE2E, RanksIgnoringSigtermAreKilledAfterTheGracePeriod) {
  Hooprun job({"-np", "2", "/bin/sh", "-c", "trap '' TERM; echo ready; sleep 30"});
  ASSERT_TRUE(job.waitForStdout("ready", 2, milliseconds(5000)));
  auto sent = Clock::now();
  job.signal(SIGTERM);
  RunResult r = job.finish();
  double after_signal = std::chrono::duration<double>(Clock::now() - sent).count();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM);
  EXPECT_THAT(r.err,
              HasSubstr("hooprun: 2 ranks still running 3 s after SIGTERM (0-1); sending SIGKILL"));
  EXPECT_GT(after_signal, 2.5);
  EXPECT_LT(after_signal, 8.0);
}

TEST(HooprunE2E, SecondInterruptKillsAtOnce) {
  Hooprun job({"-np", "2", "/bin/sh", "-c", "trap '' INT; echo ready; sleep 30"});
  ASSERT_TRUE(job.waitForStdout("ready", 2, milliseconds(5000)));
  auto sent = Clock::now();
  job.signal(SIGINT);
  std::this_thread::sleep_for(milliseconds(300));
  job.signal(SIGINT);
  RunResult r = job.finish();
  double after_signal = std::chrono::duration<double>(Clock::now() - sent).count();
  EXPECT_EQ(r.exit_code, 128 + SIGINT);
  EXPECT_THAT(r.err, HasSubstr("hooprun: received SIGINT; forwarding it to 2 ranks\n"));
  EXPECT_THAT(r.err, HasSubstr("hooprun: received SIGINT while stopping; killing 2 ranks (0-1)\n"));
  EXPECT_LT(after_signal, 2.0) << "without waiting out the grace period";
}

TEST(HooprunE2E, TimeoutStopsTheJobWithStatus124) {
  RunResult r = run({"--timeout", "0.5", "-np", "3", "/bin/sh", "-c",
                     "if [ $HOOP_RANK = 1 ]; then exit 0; fi; sleep 30; echo survived"});
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_GT(r.seconds, 0.4);
  EXPECT_LT(r.seconds, 4.0);
  EXPECT_THAT(r.out, Not(HasSubstr("survived")));
  EXPECT_THAT(
      r.err,
      HasSubstr("hooprun: timed out after 0.5 s; stopping the 2 ranks still running: 0,2\n"));
}

TEST(HooprunE2E, TimeoutDoesNotFireForAJobThatEndsInTime) {
  RunResult r = run({"--timeout", "20", "-np", "2", "/bin/sh", "-c", "exit 0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

TEST(HooprunE2E, MissingProgramExits127) {
  RunResult r = run({"-np", "2", "hooprun-no-such-program", "arg"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err,
            "hooprun: cannot execute 'hooprun-no-such-program': No such file or directory\n");
  EXPECT_EQ(r.out, "");
}

TEST(HooprunE2E, ProgramThatCannotRunExits126) {
  test::ScratchDir scratch;
  std::string path = scratch.write("not_executable", "#!/bin/sh\necho hi\n");  // not executable
  RunResult r = run({"-np", "1", path});
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_EQ(r.err, "hooprun: cannot execute '" + path + "': Permission denied\n");
}

TEST(HooprunE2E, ProgramIsFoundInPath) {
  RunResult r = run({"-np", "1", "sh", "-c", "echo found"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[0] found\n");
}

TEST(HooprunE2E, UsageErrorsExit2) {
  RunResult unknown = run({"--frobnicate", "-np", "2", "true"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err,
            "hooprun: unknown option '--frobnicate'\nTry 'hooprun --help' for more information.\n");

  RunResult slots = run({"-np", "5", "-H", "a:2,b:2", "true"});
  EXPECT_EQ(slots.exit_code, 2);
  EXPECT_THAT(slots.err,
              HasSubstr("hooprun: -np 5 needs 5 slots but the hosts offer only 4 (a:2,b:2)\n"));

  RunResult zero = run({"-np", "0", "true"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("-np '0': the number of ranks must be"));

  RunResult no_program = run({"-np", "2"});
  EXPECT_EQ(no_program.exit_code, 2);
  EXPECT_THAT(no_program.err, HasSubstr("hooprun: no program to run\n"));
}

TEST(HooprunE2E, HelpAndVersion) {
  RunResult help = run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Usage: hooprun -np N [options] [--] prog [args...]"));
  EXPECT_EQ(run({"-h"}).out, help.out);
  RunResult version = run({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(std::regex_match(version.out, std::regex(R"(hooprun \(hoop\) \d+\.\d+\.\d+\n)")))
      << version.out;
}

// --- several hosts, through HOOP_RSH ---------------------------------------------------------

TEST(HooprunE2E, RemoteRanksGetTheContractThroughTheRemoteShell) {
  test::ScratchDir scratch;
  std::string log = scratch.file("rsh_log");
  std::vector<std::string> env = fakeRshEnv(log);
  env.push_back("FROM_LAUNCHER=copied");
  RunResult r = run({"-H", "nodeA:2,nodeB:2", "-np", "3", "-x", "FOO=a 'b' $c", "-x",
                     "FROM_LAUNCHER", "/bin/sh", "-c",
                     "echo \"$FAKE_RSH_HOST|$HOOP_RANK|$HOOP_SIZE|$HOOP_LOCAL_RANK|"
                     "$HOOP_LOCAL_SIZE|$HOOP_ROOT_ADDR|$HOOP_SECRET|$HOOP_LAUNCHER|$FOO|"
                     "$FROM_LAUNCHER|$(pwd)\""},
                    env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  std::regex line_re(R"(\[(\d)\] (node[AB])\|(\d)\|3\|(\d)\|(\d)\|(nodeA:\d+)\|([0-9a-f]{32}))"
                     R"(\|hooprun\|a 'b' \$c\|copied\|(.*))");
  std::map<std::string, std::string> host_of, local_of;
  std::set<std::string> secrets, roots;
  for (const std::string& line : lines(r.out)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << line;
    EXPECT_EQ(m[1], m[3]);
    host_of[m[3]] = m[2];
    local_of[m[3]] = std::string(m[4]) + "/" + std::string(m[5]);
    roots.insert(m[6]);
    secrets.insert(m[7]);
    EXPECT_EQ(m[8], cwd) << "the remote side enters hooprun's directory";
  }
  EXPECT_EQ(host_of,
            (std::map<std::string, std::string>{{"0", "nodeA"}, {"1", "nodeA"}, {"2", "nodeB"}}));
  EXPECT_EQ(local_of,
            (std::map<std::string, std::string>{{"0", "0/2"}, {"1", "1/2"}, {"2", "0/1"}}));
  EXPECT_EQ(roots.size(), 1u);
  ASSERT_EQ(secrets.size(), 1u);

  // What the remote shell was asked to run is what ps would show: never the secret.
  std::string commands = readFile(log);
  EXPECT_EQ(lines(commands).size(), 3u) << commands;
  EXPECT_THAT(commands, HasSubstr("nodeB cd "));
  EXPECT_THAT(commands, Not(HasSubstr(*secrets.begin())));
}

TEST(HooprunE2E, RemoteArgumentsSurviveTheRemoteShell) {
  test::ScratchDir scratch;
  std::string log = scratch.file("rsh_log");
  RunResult r = run({"-H", "nodeA", "-np", "1", "/bin/sh", "-c", "printf '<%s>' \"$@\"; echo",
                     "argv0", "two words", "it's", "$HOME", "`id`", "", "*"},
                    fakeRshEnv(log));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[0] <two words><it's><$HOME><`id`><><*>\n");
}

TEST(HooprunE2E, RemoteFailureStopsTheJob) {
  test::ScratchDir scratch;
  std::string log = scratch.file("rsh_log");
  RunResult r = run({"-H", "nodeA:1,nodeB:1", "-np", "2", "/bin/sh", "-c",
                     "if [ $HOOP_RANK = 1 ]; then echo bad >&2; exit 7; fi; sleep 30"},
                    fakeRshEnv(log));
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_THAT(r.err, HasSubstr("[1] bad\n"));
  std::regex message(
      R"(hooprun: rank 1 \(pid \d+, host nodeB\) exited with status 7; stopping the other 1 rank\n)");
  EXPECT_TRUE(std::regex_search(r.err, message)) << r.err;
}

TEST(HooprunE2E, LocalRanksBesideRemoteOnesRunHere) {
  test::ScratchDir scratch;
  std::string log = scratch.file("rsh_log");
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  RunResult r = run({"-H", "localhost:1,nodeB:1", "/bin/sh", "-c",
                     "echo \"${FAKE_RSH_HOST:-here}|$HOOP_ROOT_ADDR|$HOOP_SECRET\""},
                    fakeRshEnv(log));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> out = sortedLines(r.out);
  ASSERT_EQ(out.size(), 2u) << r.out;
  std::regex rank0(R"(\[0\] here\|)" + std::string(host) + R"(:\d+\|[0-9a-f]{32})");
  std::regex rank1(R"(\[1\] nodeB\|)" + std::string(host) + R"(:\d+\|[0-9a-f]{32})");
  EXPECT_TRUE(std::regex_match(out[0], rank0)) << out[0];
  EXPECT_TRUE(std::regex_match(out[1], rank1)) << out[1];
  EXPECT_EQ(lines(readFile(log)).size(), 1u) << "only the remote rank goes through HOOP_RSH";
}

// Each rank reports the CPUs it may run on (the kernel's own list, from /proc): bound ranks get
// one core each, in turn, and hooprun's own mask is left as it was.
TEST(HooprunE2E, BindToCoreGivesEachRankOneCoreInTurn) {
  const size_t cores = usableCores().size();
  const std::string report = "grep Cpus_allowed_list /proc/self/status | cut -f2";
  RunResult unbound = run({"-np", "2", "/bin/sh", "-c", report});
  ASSERT_EQ(unbound.exit_code, 0) << unbound.err;
  const std::vector<std::string> free = sortedLines(unbound.out);
  ASSERT_EQ(free.size(), 2u) << unbound.out;
  EXPECT_EQ(free[0].substr(4), free[1].substr(4)) << "without --bind-to both see the same mask";

  RunResult bound = run({"-np", "3", "--bind-to", "core", "/bin/sh", "-c", report});
  ASSERT_EQ(bound.exit_code, 0) << bound.err;
  const std::vector<std::string> out = sortedLines(bound.out);
  ASSERT_EQ(out.size(), 3u) << bound.out;
  std::vector<std::string> lists;
  for (const std::string& line : out) lists.push_back(line.substr(4));  // after "[r] "
  if (cores == 1) GTEST_SKIP() << "one core: every rank is bound to it";
  EXPECT_NE(lists[0], free[0].substr(4)) << "rank 0 bound to less than the whole mask";
  EXPECT_NE(lists[0], lists[1]) << "ranks 0 and 1 on different cores";
  if (cores == 2) {
    EXPECT_EQ(lists[2], lists[0]) << "3 ranks on 2 cores: rank 2 shares core 0";
  }
}

TEST(HooprunE2E, MissingRemoteShellExits127) {
  RunResult r =
      run({"-H", "nodeA", "-np", "1", "true"}, {"HOOP_RSH=hooprun-no-such-rsh -o BatchMode=yes"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err, "hooprun: cannot execute 'hooprun-no-such-rsh': No such file or directory\n");
}

}  // namespace
}  // namespace hoop::run
