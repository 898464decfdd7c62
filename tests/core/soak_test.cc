// Load, resource hygiene and failure behaviour across real processes (127.0.0.1 only): long runs
// of collectives with exact results and stable fds/threads/memory, create/destroy cycles, abort
// and peer failure releasing everything, SIGKILL of a rank mid-loop, mismatched calls, and a
// flood of silent connections on the rendezvous and data ports. Each rank checks its own
// results and resources (tests/core/soak_worker.cc); this file starts them and reads verdicts.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "process_runner.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;
using Clock = std::chrono::steady_clock;

std::string readText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Waits until `path` contains `needle` (or 60 s pass); returns whether it did.
bool waitForLog(const std::string& path, const std::string& needle) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    if (readText(path).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Checks every process's verdict, and prints the resource figures the ranks measured so that a
// passing run's log still shows how close they came to their bounds.
void expectAllPassed(const std::vector<ProcessResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    std::istringstream lines(results[r].output);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("RESOURCES", 0) == 0) std::printf("%s\n", line.c_str());
    }
    EXPECT_EQ(results[r].status, 0) << "process " << r << " output:\n" << results[r].output;
    EXPECT_NE(results[r].output.find("OK rank"), std::string::npos) << results[r].output;
  }
}

// Starts nranks soak workers that join through a unique id made here, with `args` and `env`.
void startRanks(ProcessGroup& group, int nranks, const std::vector<std::string>& args,
                const Env& env) {
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  for (int r = 0; r < nranks; ++r) {
    Env rankEnv = env;
    rankEnv["HOOP_TEST_UID"] = toHex(id);
    rankEnv["HOOP_TEST_RANK"] = std::to_string(r);
    rankEnv["HOOP_TEST_NRANKS"] = std::to_string(nranks);
    std::vector<std::string> argv = {HOOP_SOAK_WORKER};
    argv.insert(argv.end(), args.begin(), args.end());
    group.start(argv, rankEnv);
  }
}

std::vector<ProcessResult> runRanks(int nranks, const std::vector<std::string>& args,
                                    const Env& env, int timeoutSeconds = 120) {
  ProcessGroup group;
  startRanks(group, nranks, args, env);
  return group.wait(std::chrono::seconds(timeoutSeconds));
}

class Transport : public ::testing::TestWithParam<std::string> {};

// 10,000 small allreduces (every type and op, 1-64 elements) with 100 large ones (1-4 MiB) and
// barriers among them on 4 ranks; every result exact. Each rank compares its open fds and
// threads after the warm-up (the first tenth) and at the end exactly, its heap in use within
// 64 KiB (a leak of 8 bytes per call over the 9,000 calls after warm-up is 70 KiB) and its
// anonymous resident memory within 1 MiB. Resident memory as a whole is not bounded: it grows
// by up to 900 KiB when a schedule first reaches shm slots the warm-up left untouched. Measured
// growth on the 2-core CI VM: heap 1 KiB, anonymous memory 0 KiB per rank. About 0.5 s over
// shm and 1 s over tcp there.
TEST_P(Transport, TenThousandAllReducesKeepResourcesFlat) {
  expectAllPassed(runRanks(4, {"--suite", "soak", "--small", "10000", "--large", "100"},
                           {{"HOOP_TRANSPORT", GetParam()}}));
}

// 1,000 communicators created and destroyed on 2 ranks (each runs one allreduce): fds, threads
// and shm mappings back exactly to where they were after 20 warm-up cycles, heap in use within
// 32 KiB (a leak of 34 bytes per cycle exceeds it) and anonymous resident memory within 512 KiB.
// Each sample first has the allocator hand back its free pages: glibc once kept 1.3 MiB of free
// heap top that appeared between the samples on CI, which is not memory anything holds.
// Measured growth: heap 0-1 KiB, anonymous memory 0 KiB; 16-18 s over shm (segment set-up per
// cycle) and 12-17 s over tcp on the 2-core CI VM, with the rest of the suite running beside it.
// This test found hwloc's PCI backend leaking 1 KiB per topology read when every communicator read
// the machine afresh.
TEST_P(Transport, CreateDestroyCyclesLeaveNothingBehind) {
  expectAllPassed(runRanks(2,
                           {"--suite", "cycles", "--cycles", "1000", "--heap-bound-kib", "32",
                            "--anon-bound-kib", "512"},
                           {{"HOOP_TRANSPORT", GetParam()}}));
}

// hoop's shared-memory segments in /dev/shm seen three times in a row 100 ms apart (they live
// only between creation and the peer's mapping, so one that stays is a leak).
std::set<std::string> lingeringSegments() {
  std::set<std::string> names;
  for (int look = 0; look < 3; ++look) {
    std::set<std::string> now;
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
      std::string name = entry.path().filename();
      if (name.rfind("hoop-", 0) == 0) now.insert(name);
    }
    if (look == 0) {
      names = now;
    } else {
      std::erase_if(names, [&](const std::string& n) { return now.count(n) == 0; });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return names;
}

TEST_P(Transport, AbortReleasesEverything) {
  auto results = runRanks(2, {"--suite", "abort"}, {{"HOOP_TRANSPORT", GetParam()}}, 60);
  expectAllPassed(results);
  EXPECT_NE(results[0].output.find("aborted (hoopCommAbort)"), std::string::npos)
      << results[0].output;
  EXPECT_TRUE(lingeringSegments().empty());
}

TEST_P(Transport, PeerFailureReleasesEverything) {
  auto results = runRanks(3, {"--suite", "peer-failure"},
                          {{"HOOP_TRANSPORT", GetParam()}, {"HOOP_TIMEOUT", "10"}}, 60);
  EXPECT_EQ(results[2].status, 128 + SIGKILL) << results[2].output;
  for (int r : {0, 1}) {
    EXPECT_EQ(results[r].status, 0) << results[r].output;
    EXPECT_NE(results[r].output.find("saw the failure"), std::string::npos) << results[r].output;
  }
  EXPECT_TRUE(lingeringSegments().empty());
}

// SIGKILL of one of 4 ranks in a long allreduce loop: every survivor's allreduce fails within
// HOOP_TIMEOUT + 2 s of the kill with hoopRemoteError naming the dead rank with its host and pid.
// The survivors that talk to the dead rank find out themselves; they send the others a failure
// notice before returning, so the survivors that only talk to survivors name the dead rank too
// (and which rank reported it), rather than a survivor that gave up first.
TEST_P(Transport, KilledRankIsReportedInTime) {
  constexpr int kTimeoutSeconds = 3;
  constexpr int kVictim = 2;
  ProcessGroup group;
  startRanks(group, 4, {"--suite", "kill-loop"},
             {{"HOOP_TRANSPORT", GetParam()}, {"HOOP_TIMEOUT", std::to_string(kTimeoutSeconds)}});
  for (size_t r = 0; r < 4; ++r) ASSERT_TRUE(waitForLog(group.logPath(r), "LOOPING"));
  const std::string victim = "rank " + std::to_string(kVictim) + " (host ";
  const std::string victimPid = ", pid " + std::to_string(group.pid(kVictim)) + ")";
  group.kill(kVictim, SIGKILL);
  timespec killed{};
  clock_gettime(CLOCK_MONOTONIC, &killed);
  const int64_t killedUs = static_cast<int64_t>(killed.tv_sec) * 1000000 + killed.tv_nsec / 1000;
  auto results = group.wait(std::chrono::seconds(60));
  EXPECT_EQ(results[kVictim].status, 128 + SIGKILL);
  const std::regex errorLine(R"(ERROR rank (\d) at (\d+) us: (\w+): (.*))");
  for (int r = 0; r < 4; ++r) {
    if (r == kVictim) continue;
    const std::string& log = results[r].output;
    EXPECT_EQ(results[r].status, 2) << "rank " << r << ":\n" << log;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(log, match, errorLine)) << "rank " << r << ":\n" << log;
    const int64_t afterKillUs = std::stoll(match[2]) - killedUs;
    EXPECT_LE(afterKillUs, (kTimeoutSeconds + 2) * 1000000LL) << "rank " << r << ":\n" << log;
    EXPECT_EQ(match[3], "hoopRemoteError") << match[0];
    const std::string message = match[4];
    const size_t named = message.find(victim);
    ASSERT_NE(named, std::string::npos) << "rank " << r << ": " << message;
    EXPECT_NE(message.find(victimPid, named), std::string::npos) << "rank " << r << ": " << message;
  }
}

// The same under hooprun: a rank SIGKILLs itself mid-loop; hooprun exits non-zero naming it.
TEST(KillUnderHooprun, HooprunNamesTheDeadRank) {
  ProcessGroup group;
  group.start({HOOP_TEST_HOOPRUN, "-np", "3", HOOP_SOAK_WORKER, "--init", "env", "--suite",
               "kill-loop", "--suicide-rank", "1"},
              {{"HOOP_TIMEOUT", "3"}});
  auto results = group.wait(std::chrono::seconds(60));
  EXPECT_NE(results[0].status, 0) << results[0].output;
  EXPECT_TRUE(std::regex_search(results[0].output,
                                std::regex(R"(rank 1 \(pid \d+, host [^)]+\) killed by signal 9)")))
      << results[0].output;
}

INSTANTIATE_TEST_SUITE_P(Soak, Transport, ::testing::Values("shm", "tcp"),
                         [](const auto& p) { return p.param; });

// Rank 0 and the last of 3 ranks make calls that differ in one respect (rank 1 makes rank 0's
// call). Every call sent carries its kind, sequence, count, type, op and root, so a rank that
// receives data from a different call fails with hoopInvalidUsage naming both calls, and sends
// every other rank a failure notice before returning: they fail with hoopInvalidUsage too, with
// the same words and which rank reported it. Nobody ends with a wrong result or a timeout. A rank
// whose part was done before anything went wrong returns success, and hoopCommGetAsyncError
// reports the notice once one came. A different root can leave the odd rank waiting for a rank
// that will never send (with the tree broadcast, rank 0's data lands at rank 2 unclaimed while
// rank 2 waits for rank 1): a long wait looks at unclaimed messages too, and finds it there.
class Mismatch : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Mismatch, EveryRankReturnsInvalidUsageNamingBothCalls) {
  auto [what, transport] = GetParam();
  auto results = runRanks(
      3, {"--suite", "mismatch", "--what", what},
      {{"HOOP_TRANSPORT", transport}, {"HOOP_TIMEOUT", "5"}, {"HOOP_TEST_LINGER_MS", "400"}}, 60);
  // What the odd rank's call and the others' call look like in a message naming both.
  const std::map<std::string, std::pair<std::string, std::string>> calls = {
      {"kind", {"broadcast #0", "allreduce #0"}},
      {"count", {"1000 x int32", "1024 x int32"}},
      {"dtype", {"1024 x int64", "1024 x int32"}},
      {"op", {"int32, max", "int32, sum"}},
      {"root", {"root 1", "root 0"}}};
  const auto& [odd, others] = calls.at(what);
  for (size_t r = 0; r < 3; ++r) {
    std::smatch match;
    const std::string& log = results[r].output;
    ASSERT_TRUE(std::regex_search(log, match, std::regex(R"(MISMATCH rank \d: (\w+): (.*))")))
        << "rank " << r << ":\n"
        << log;
    const std::string message = match[2];
    EXPECT_EQ(match[1], "hoopInvalidUsage") << "rank " << r << ": " << message;
    EXPECT_NE(message.find(odd), std::string::npos) << "rank " << r << ": " << message;
    EXPECT_NE(message.find(others), std::string::npos) << "rank " << r << ": " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Soak, Mismatch,
    ::testing::Combine(::testing::Values("kind", "count", "dtype", "op", "root"),
                       ::testing::Values("shm", "tcp")),
    [](const auto& p) { return std::get<0>(p.param) + "_" + std::get<1>(p.param); });

// Open fds of process `pid` now.
size_t openFds(pid_t pid) {
  std::error_code error;
  size_t count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    ++count;
  }
  return count;
}

// TCP ports process `pid` listens on (its sockets' inodes matched against /proc/net/tcp).
std::vector<int> listeningPorts(pid_t pid) {
  std::set<std::string> inodes;
  std::error_code error;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
       !error && it != std::filesystem::directory_iterator(); it.increment(error)) {
    std::string target = std::filesystem::read_symlink(it->path(), error);
    if (target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  std::vector<int> ports;
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
        timeout >> inode;
    if (state == "0A" && inodes.count(inode) != 0) {
      ports.push_back(std::stoi(local.substr(local.find(':') + 1), nullptr, 16));
    }
  }
  return ports;
}

// Whether `pid` is still running (not gone, not a zombie waiting to be reaped).
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t afterName = line.rfind(") ");
  return afterName != std::string::npos && line[afterName + 2] != 'Z';
}

// `count` connections to 127.0.0.1:port that never send a byte; closed when this goes.
class SilentCrowd {
 public:
  SilentCrowd(int port, size_t count) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (size_t i = 0; i < count; ++i) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) break;
      // Non-blocking: with the listener's backlog full, a connect would wait on SYN retries.
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
      fds_.push_back(fd);
    }
  }
  ~SilentCrowd() {
    for (int fd : fds_) close(fd);
  }
  SilentCrowd(const SilentCrowd&) = delete;
  SilentCrowd& operator=(const SilentCrowd&) = delete;

 private:
  std::vector<int> fds_;
};

// 1,000 silent strangers on the rendezvous root's port (rank 0 hosts it) before the others
// arrive, and 1,000 on rank 1's data port before rank 0 connects to it: the job completes with
// exact results and neither rank ever holds more than a bounded number of fds (the pending cap
// is 128; without it each stranger costs the rank one fd).
TEST(Flood, SilentConnectionsCannotExhaustFdsOrStallTheJob) {
  constexpr size_t kStrangers = 1000;
  constexpr size_t kFdBound = 400;
  const int rootPort = freePort();
  auto env = [&](int r) {
    return Env{{"HOOP_RANK", std::to_string(r)},
               {"HOOP_SIZE", "3"},
               {"HOOP_ROOT_ADDR", "127.0.0.1:" + std::to_string(rootPort)},
               {"HOOP_SECRET", "00112233445566778899aabbccddeeff"},
               {"HOOP_TRANSPORT", "tcp"},
               {"HOOP_INIT_TIMEOUT", "60"}};
  };
  const std::vector<std::string> argv = {HOOP_SOAK_WORKER,
                                         "--init",
                                         "env",
                                         "--suite",
                                         "soak",
                                         "--small",
                                         "300",
                                         "--large",
                                         "3",
                                         "--heap-bound-kib",
                                         "65536",
                                         "--anon-bound-kib",
                                         "65536"};
  ProcessGroup job;
  job.start(argv, env(0));
  // Rank 0 listens twice (the root and its data port); find them, then crowd the root.
  std::vector<int> rank0Ports;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (rank0Ports.size() < 2 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rank0Ports = listeningPorts(job.pid(0));
  }
  ASSERT_EQ(rank0Ports.size(), 2u);
  SilentCrowd atRoot(rootPort, kStrangers);
  // Until rank 0 says it closed some (or holds too many fds, which ends the wait early).
  size_t most = 0;
  const auto crowdDeadline = Clock::now() + std::chrono::seconds(30);
  while (most <= kFdBound && Clock::now() < crowdDeadline &&
         readText(job.logPath(0)).find("connection(s) that sent no hello") == std::string::npos) {
    most = std::max(most, openFds(job.pid(0)));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  most = std::max(most, openFds(job.pid(0)));
  ASSERT_LE(most, kFdBound) << "rank 0 holds an fd per silent stranger";
  ASSERT_NE(readText(job.logPath(0)).find("connection(s) that sent no hello"), std::string::npos)
      << readText(job.logPath(0));

  job.start(argv, env(1));
  std::vector<int> rank1Ports;
  while (rank1Ports.empty() && Clock::now() < deadline + std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rank1Ports = listeningPorts(job.pid(1));
  }
  ASSERT_EQ(rank1Ports.size(), 1u);
  SilentCrowd atData(rank1Ports[0], kStrangers);
  job.start(argv, env(2));

  // Watch both crowded ranks' fds until the job ends.
  while (alive(job.pid(0)) || alive(job.pid(1))) {
    most = std::max({most, openFds(job.pid(0)), openFds(job.pid(1))});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto results = job.wait(std::chrono::seconds(120));
  expectAllPassed(results);
  EXPECT_LE(most, kFdBound);
  EXPECT_NE(results[1].output.find("connection(s) that sent no hello"), std::string::npos)
      << results[1].output;
}

}  // namespace
}  // namespace hoop::test
