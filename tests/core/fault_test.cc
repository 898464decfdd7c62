// Faults in real jobs: a rank stopped with SIGSTOP mid-loop must turn into hoopTimeout on every
// other rank with a hang report that names it, directly and through hooprun; strangers knocking
// on a rank's listener with garbage or the wrong secret are refused while the job goes on.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "core/bootstrap.h"
#include "core/failure_notice.h"
#include "core/rank_status.h"
#include "process_runner.h"
#include "transport/tcp/hello.h"
#include "transport/tcp/notice_wire.h"
#include "transport/tcp/status_query.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;
using std::chrono::steady_clock;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits until the index-th process's output matches `pattern`; returns the first match's
// groups (the whole match first), or nothing after a minute.
std::vector<std::string> awaitOutput(ProcessGroup& group, size_t index,
                                     const std::string& pattern) {
  const auto deadline = steady_clock::now() + std::chrono::seconds(60);
  std::string text;
  while (steady_clock::now() < deadline) {
    text = readFile(group.logPath(index));
    std::smatch match;
    if (std::regex_search(text, match, std::regex(pattern))) {
      return std::vector<std::string>(match.begin(), match.end());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "process " << index << " never printed /" << pattern << "/; output:\n" << text;
  return {};
}

// Waits until every process but `except` has exited; returns how long that took.
std::chrono::duration<double> awaitOthers(ProcessGroup& group, size_t count, size_t except) {
  const auto start = steady_clock::now();
  while (steady_clock::now() - start < std::chrono::seconds(60)) {
    bool all = true;
    for (size_t i = 0; i < count; ++i) all = all && (i == except || group.exited(i));
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return steady_clock::now() - start;
}

constexpr int kTimeoutSeconds = 2;
// Past HOOP_TIMEOUT: the report's gathering (1.5 s) and a loaded machine's scheduling.
constexpr double kSlackSeconds = 10;

class StoppedRank : public ::testing::TestWithParam<std::string> {};

// One rank of four stops mid-allreduce: the other three time out and their report names it with
// its host and pid, what the others know it completed, and who waits for it.
TEST_P(StoppedRank, OthersTimeOutAndTheReportNamesIt) {
  constexpr int kRanks = 4;
  constexpr size_t kVictim = 2;
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  ProcessGroup group;
  for (int r = 0; r < kRanks; ++r) {
    group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "loop", "--count", "16384"},
                {{"HOOP_TEST_UID", toHex(id)},
                 {"HOOP_TEST_RANK", std::to_string(r)},
                 {"HOOP_TEST_NRANKS", std::to_string(kRanks)},
                 {"HOOP_TRANSPORT", GetParam()},
                 {"HOOP_TIMEOUT", std::to_string(kTimeoutSeconds)}});
  }
  for (int r = 0; r < kRanks; ++r) awaitOutput(group, r, "LOOP rank");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // well into the loop
  group.kill(kVictim, SIGSTOP);
  const auto took = awaitOthers(group, kRanks, kVictim);
  group.kill(kVictim, SIGKILL);
  auto results = group.wait(std::chrono::seconds(10));

  EXPECT_LT(took.count(), kTimeoutSeconds + kSlackSeconds);
  const std::string victim = "rank 2 (host ";
  const std::string silent = "pid " + std::to_string(group.pid(kVictim)) +
                             "): no answer (stopped, busy outside hoop, or unreachable); "
                             "last completed allreduce #";
  bool everyoneAnswered = false;
  for (size_t r = 0; r < kRanks; ++r) {
    if (r == kVictim) continue;
    const std::string& out = results[r].output;
    EXPECT_EQ(results[r].status, 1) << out;
    EXPECT_NE(out.find("operation timed out: rank " + std::to_string(r) + ": allreduce #"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("timed out after 2 s waiting for"), std::string::npos) << out;
    EXPECT_NE(out.find("hoop ERROR COLL rank " + std::to_string(r) + ": allreduce #"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("hoop hang report from rank " + std::to_string(r) + " (4 ranks"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find(victim), std::string::npos) << out;
    EXPECT_NE(out.find(silent), std::string::npos) << out;
    // Some rank waits on the stopped one directly, and the report says which.
    EXPECT_TRUE(std::regex_search(out, std::regex("  rank [0-3] waits for [^\\n]*rank 2 \\(host")))
        << out;
    everyoneAnswered |= out.find("(4 ranks, 3 answered") != std::string::npos;
  }
  // Survivors time out together and answer each other while they gather; on a loaded machine
  // one may have left already, so at least one report must have all three.
  EXPECT_TRUE(everyoneAnswered) << results[0].output;
}

INSTANTIATE_TEST_SUITE_P(Transport, StoppedRank, ::testing::Values("tcp", "shm"));

// Through hooprun: the job fails, and hooprun repeats one hang report, naming the stopped rank.
TEST(StoppedRankUnderHooprun, HooprunPrintsTheReportOnce) {
  ProcessGroup group;
  group.start({HOOP_TEST_HOOPRUN, "-np", "3", HOOP_TEST_WORKER, "--init", "env", "--suite", "loop",
               "--count", "16384"},
              {{"HOOP_TIMEOUT", std::to_string(kTimeoutSeconds)}});
  const auto match = awaitOutput(group, 0, "LOOP rank 1 pid ([0-9]+)");
  ASSERT_FALSE(match.empty());
  const pid_t victim = std::stoi(match[1]);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(victim, SIGSTOP), 0);
  auto results = group.wait(std::chrono::seconds(60));
  const std::string& out = results[0].output;
  EXPECT_EQ(results[0].status, 1) << out;
  // The first survivor to fail makes hooprun stop the others, so the report may be rank 0's or
  // rank 2's, whichever printed one; it is repeated once either way.
  std::smatch repeated;
  ASSERT_TRUE(std::regex_search(
      out, repeated,
      std::regex("hooprun: an operation timed out; the hang report rank ([02]) printed:\n")))
      << out;
  const std::string tail = repeated.suffix().str();
  EXPECT_EQ(tail.find("the hang report rank"), std::string::npos) << "printed twice:\n" << out;
  EXPECT_EQ(tail.rfind("hooprun: hoop hang report from rank " + repeated[1].str() + " (3 ranks", 0),
            0u)
      << out;
  EXPECT_NE(tail.find("hooprun:   rank 1 (host "), std::string::npos) << out;
  EXPECT_NE(tail.find("pid " + std::to_string(victim) + "): no answer"), std::string::npos) << out;
  // hooprun killed the stopped rank after its grace period: nothing is left behind.
  EXPECT_NE(::kill(victim, 0), 0);
}

// Strangers at a rank's listener: garbage, a query without the secret, a hello with an unknown
// purpose, a failure notice without the secret, a notice with the secret but a garbage payload.
// Each is refused and logged, and the job finishes with exact results; a query with the secret
// gets the rank's status.
TEST(StatusQuery, StrangersAreRefusedAndTheJobGoesOn) {
  hoopUniqueId id;
  ASSERT_EQ(hoopGetUniqueId(&id), hoopSuccess);
  const BootstrapId job = BootstrapId::decode(id);
  ProcessGroup group;
  for (int r = 0; r < 2; ++r) {
    group.start({HOOP_TEST_WORKER, "--init", "uid", "--suite", "loop", "--seconds", "3"},
                {{"HOOP_TEST_UID", toHex(id)},
                 {"HOOP_TEST_RANK", std::to_string(r)},
                 {"HOOP_TEST_NRANKS", "2"},
                 {"HOOP_TRANSPORT", "tcp"},
                 {"HOOP_DEBUG", "INFO"},
                 {"HOOP_DEBUG_SUBSYS", "NET"},
                 {"HOOP_TIMEOUT", "30"}});
  }
  const auto match =
      awaitOutput(group, 0, "connected to rank 1 \\([^)]*\\) at ([0-9.:]+) over tcp");
  ASSERT_FALSE(match.empty());
  const SocketAddress rank1 = SocketAddress::parse(match[1]);
  awaitOutput(group, 1, "LOOP rank");

  TcpHello query;
  query.purpose = HelloPurpose::kStatusQuery;
  query.streams = 1;
  query.secret = job.secret;
  query.jobTag = job.jobTag;
  query.fromRank = 0;
  query.toRank = 1;
  TcpHello wrongSecret = query;
  wrongSecret.secret.bytes[0] ^= 1;
  std::vector<uint8_t> garbage(tcpHelloBytes(), 0x5a);
  std::vector<uint8_t> unknownPurpose = encodeTcpHello(query);
  unknownPurpose[10] = 9;
  // A failure notice that would fail the job, from a stranger without the secret; and one with
  // the secret whose payload is garbage. Both must leave the job running.
  FailureNotice notice;
  notice.reporter = 0;
  notice.code = hoopRemoteError;
  notice.operation = {OpKind::kAllReduce, 1, 0, DataType::kInt8};
  notice.cause = "forged: rank 0 says everyone died";
  TcpHello forgedHello = wrongSecret;
  forgedHello.purpose = HelloPurpose::kFailureNotice;
  std::vector<uint8_t> forged = encodeTcpHello(forgedHello);
  const auto forgedNotice = frameNotice(encodeFailureNotice(notice, job.jobTag));
  forged.insert(forged.end(), forgedNotice.begin(), forgedNotice.end());
  TcpHello noticeHello = query;
  noticeHello.purpose = HelloPurpose::kFailureNotice;
  std::vector<uint8_t> garbled = encodeTcpHello(noticeHello);
  const auto garbledNotice = frameNotice(std::vector<uint8_t>(40, 0x5a));
  garbled.insert(garbled.end(), garbledNotice.begin(), garbledNotice.end());
  const auto until = steady_clock::now() + std::chrono::seconds(2);
  // The strangers get no answer; the job's own query does.
  auto answers = askForStatus({{rank1, garbage},
                               {rank1, encodeTcpHello(wrongSecret)},
                               {rank1, unknownPurpose},
                               {rank1, encodeTcpHello(query)},
                               {rank1, forged},
                               {rank1, garbled}},
                              until, [] { return true; });
  EXPECT_TRUE(answers[0].empty());
  EXPECT_TRUE(answers[1].empty());
  EXPECT_TRUE(answers[2].empty());
  ASSERT_FALSE(answers[3].empty()) << "rank 1 did not answer the job's own query";
  const RankStatus status = decodeRankStatus(answers[3], 1, job.jobTag);
  EXPECT_EQ(status.current.kind, OpKind::kAllReduce);
  EXPECT_EQ(status.state, RankStatus::State::kWaiting);
  EXPECT_NE(status.waitingFor.find("rank 0 (host"), std::string::npos) << status.waitingFor;

  auto results = group.wait(std::chrono::seconds(60));
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].status, 0) << results[r].output;
    EXPECT_NE(results[r].output.find("OK rank"), std::string::npos) << results[r].output;
  }
  const std::string& log = results[1].output;
  EXPECT_NE(log.find("refused a connection from 127.0.0.1"), std::string::npos) << log;
  EXPECT_NE(log.find(": not a hoop connection"), std::string::npos) << log;
  EXPECT_NE(log.find(": unknown connection purpose 9"), std::string::npos) << log;
  EXPECT_NE(log.find("refused a status query from 127.0.0.1"), std::string::npos) << log;
  EXPECT_NE(log.find(": it did not present this job's secret"), std::string::npos) << log;
  EXPECT_NE(log.find("answered a status query from rank 0 (host"), std::string::npos) << log;
  EXPECT_NE(log.find("refused a failure notice from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("ignored a failure notice from rank 0 (host"), std::string::npos) << log;
  EXPECT_EQ(log.find("forged:"), std::string::npos) << log;
}

}  // namespace
}  // namespace hoop::test
