// Strangers on the job's ports: a separate process (this test) sends garbage, truncated,
// oversized and wrong-secret messages to the rendezvous root and to a rank's data listener while
// a real job runs collectives, and plays a hostile root to a rank. The job must finish with exact
// results, every stranger must be refused and logged, and no rank may crash.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "core/bootstrap_wire.h"
#include "core/launch_env.h"
#include "process_runner.h"
#include "transport/tcp/hello.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;
using Bytes = std::vector<uint8_t>;

constexpr const char* kSecretHex = "00112233445566778899aabbccddeeff";

std::string readText(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Waits until `path` holds `needle` `times` times or more; returns the text either way.
std::string waitForLog(const std::string& path, const std::string& needle, size_t times = 1) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    std::string text = readText(path);
    size_t found = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
      ++found;
    }
    if (found >= times || std::chrono::steady_clock::now() > deadline) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t found = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++found;
  }
  return found;
}

// A connection from this process to 127.0.0.1:port, retried until the port listens.
class Intruder {
 public:
  explicit Intruder(int port) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (true) {
      fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_port = htons(static_cast<uint16_t>(port));
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) return;
      close(fd_);
      fd_ = -1;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "port " << port << " never accepted a connection";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Intruder() { hangUp(); }
  Intruder(const Intruder&) = delete;
  Intruder& operator=(const Intruder&) = delete;

  // Best effort: the listener may close on us half way, which is what it should do. Sends what
  // the socket buffers take without waiting (a listener that is not reading yet would block).
  void send(const Bytes& bytes) {
    size_t sent = 0;
    while (fd_ >= 0 && sent < bytes.size()) {
      ssize_t n =
          ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n <= 0) return;
      sent += static_cast<size_t>(n);
    }
  }
  void hangUp() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

Bytes garbage(size_t size, unsigned seed) {
  std::mt19937 random(seed);
  Bytes bytes(size);
  for (auto& b : bytes) b = static_cast<uint8_t>(random());
  return bytes;
}

// The job's environment for rank r, and the id every rank derives from it.
Env jobEnv(int rank, int nranks, int rootPort, const std::string& gate) {
  return {{"HOOP_RANK", std::to_string(rank)},
          {"HOOP_SIZE", std::to_string(nranks)},
          {"HOOP_ROOT_ADDR", "127.0.0.1:" + std::to_string(rootPort)},
          {"HOOP_SECRET", kSecretHex},
          {"HOOP_SECURITY_GATE", gate},
          {"HOOP_INIT_TIMEOUT", "60"},
          {"HOOP_DEBUG", "INFO"}};
}

BootstrapId jobId(const Env& env) {
  for (const char* name : {"HOOP_RANK", "HOOP_SIZE", "HOOP_ROOT_ADDR", "HOOP_SECRET"}) {
    setenv(name, env.at(name).c_str(), 1);
  }
  BootstrapId id = readLaunchEnv().id;
  for (const char* name : {"HOOP_RANK", "HOOP_SIZE", "HOOP_ROOT_ADDR", "HOOP_SECRET"}) {
    unsetenv(name);
  }
  return id;
}

std::string gatePath() {
  return (std::filesystem::temp_directory_path() / ("hoop-gate-" + std::to_string(getpid())))
      .string();
}

void expectJobPassed(const std::vector<ProcessResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 0) << "rank " << r << " output:\n" << results[r].output;
    EXPECT_NE(results[r].output.find("OK rank " + std::to_string(r)), std::string::npos)
        << results[r].output;
  }
}

TEST(HostileInput, RendezvousRootRefusesStrangersAndTheJobCompletes) {
  const int nranks = 3;
  const int port = freePort();
  const std::string gate = gatePath();
  std::filesystem::remove(gate);
  ProcessGroup job;
  job.start({HOOP_SECURITY_WORKER}, jobEnv(0, nranks, port, gate));
  const BootstrapId id = jobId(jobEnv(0, nranks, port, gate));

  Registration impostor;
  impostor.jobTag = id.jobTag;
  impostor.nranks = nranks;
  impostor.info.rank = 1;
  impostor.info.hostName = "intruder";
  impostor.info.listenAddress = SocketAddress::parse("127.0.0.1:9");
  impostor.secret = *Secret::fromHex("ffeeddccbbaa99887766554433221100");
  Bytes wrongSecret = encodeRegistration(impostor);
  // Length and count fields claiming the most they can: still refused for the secret first.
  impostor.nranks = 0xffffffffu;
  impostor.info.rank = 0x7fffffff;
  Bytes hugeCounts = encodeRegistration(impostor);
  Bytes wrongVersion = wrongSecret;
  wrongVersion[4] = 9;
  Bytes truncated(wrongSecret.begin(), wrongSecret.begin() + 20);

  // Held open for the whole job: a silent stranger and one that stops half way through.
  Intruder silent(port);
  Intruder halfway(port);
  halfway.send(truncated);
  {
    Intruder(port).send(garbage(registrationBytes(), 1));
    Intruder(port).send(truncated);
    Intruder(port).send(wrongSecret);
    Intruder(port).send(hugeCounts);
    Intruder(port).send(wrongVersion);
    Intruder flood(port);
    flood.send(garbage(size_t{8} << 20, 2));  // 8 MiB: the root reads one registration's worth
  }
  // Every stranger is dealt with before the real ranks arrive.
  const std::string& rootLog = job.logPath(0);
  waitForLog(rootLog, "rendezvous refused", 5);
  waitForLog(rootLog, "dropped a connection");

  for (int r = 1; r < nranks; ++r) job.start({HOOP_SECURITY_WORKER}, jobEnv(r, nranks, port, gate));
  std::ofstream(gate).put('1');
  auto results = job.wait(std::chrono::seconds(120));
  std::filesystem::remove(gate);
  expectJobPassed(results);

  const std::string& log = results[0].output;
  EXPECT_EQ(occurrences(log, "not a hoop rendezvous message"), 2u) << log;  // garbage, flood
  EXPECT_EQ(occurrences(log, "it did not present this job's secret"), 2u) << log;
  EXPECT_EQ(occurrences(log, "rendezvous wire version 9"), 1u) << log;
  EXPECT_GE(occurrences(log, "closed before sending a complete hello"), 1u) << log;
  EXPECT_NE(log.find("complete: 3 ranks"), std::string::npos) << log;
}

TEST(HostileInput, DataListenerRefusesStrangersWhileCollectivesRun) {
  // Four ranks over TCP: ring neighbours connect at init; ranks 0 and 2 (and 1 and 3) connect
  // only for the alltoall, so rank 2's listener accepts again after the strangers have called.
  const int nranks = 4;
  const int port = freePort();
  const std::string gate = gatePath();
  std::filesystem::remove(gate);
  ProcessGroup job;
  for (int r = 0; r < nranks; ++r) {
    Env env = jobEnv(r, nranks, port, gate);
    env["HOOP_TRANSPORT"] = "tcp";
    env["HOOP_ALGO"] = "ring";  // the direct allreduce would connect every pair at once
    job.start({HOOP_SECURITY_WORKER}, env);
  }
  const BootstrapId id = jobId(jobEnv(0, nranks, port, gate));

  // Rank 1 connects to rank 2 at init and logs where it listens.
  std::string rank1Log = waitForLog(job.logPath(1), "over tcp");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(rank1Log, match,
                                std::regex(R"(connected to rank 2 \(.*\) at 127\.0\.0\.1:(\d+))")))
      << rank1Log;
  const int dataPort = std::stoi(match[1]);

  TcpHello hello;
  hello.streams = 1;
  hello.jobTag = id.jobTag;
  hello.fromRank = 0;
  hello.toRank = 2;
  hello.secret = *Secret::fromHex("ffeeddccbbaa99887766554433221100");
  Bytes wrongSecret = encodeTcpHello(hello);
  // With the secret but lying about who calls: higher ranks never connect to lower ones.
  hello.secret = id.secret;
  hello.fromRank = 3;
  Bytes wrongRank = encodeTcpHello(hello);
  hello.fromRank = 0;
  hello.streams = 0xffff;
  hello.streamIndex = 0xfffe;
  Bytes hugeStreams = encodeTcpHello(hello);
  Bytes truncated(wrongSecret.begin(), wrongSecret.begin() + 10);

  Intruder silent(dataPort);
  {
    Intruder(dataPort).send(garbage(tcpHelloBytes(), 3));
    Intruder(dataPort).send(truncated);
    Intruder(dataPort).send(wrongSecret);
    Intruder(dataPort).send(wrongRank);
    Intruder(dataPort).send(hugeStreams);
    Intruder flood(dataPort);
    flood.send(garbage(size_t{8} << 20, 4));
  }
  std::ofstream(gate).put('1');
  auto results = job.wait(std::chrono::seconds(120));
  std::filesystem::remove(gate);
  expectJobPassed(results);

  const std::string& log = results[2].output;
  EXPECT_EQ(occurrences(log, "refused a connection from 127.0.0.1"), 5u) << log;
  EXPECT_EQ(occurrences(log, "not a hoop connection"), 2u) << log;  // garbage, flood
  EXPECT_EQ(occurrences(log, "it did not present this job's secret"), 1u) << log;
  EXPECT_EQ(occurrences(log, "it claims to be rank 3"), 1u) << log;
  EXPECT_EQ(occurrences(log, "bad stream 65534 of 65535"), 1u) << log;
  // The truncated hello is only noticed if the listener polls once more after the peer it waits
  // for has arrived, which it need not do.
  EXPECT_LE(occurrences(log, "closed before sending a complete hello"), 1u) << log;
  EXPECT_NE(log.find("accepted rank 0"), std::string::npos) << log;
}

// A hostile root: a rank must turn a malformed answer into an error naming it, never a crash or a
// multi-gigabyte allocation.
void answerOneRegistration(int listener, const Bytes& answer) {
  int fd = accept(listener, nullptr, nullptr);
  ASSERT_GE(fd, 0);
  Bytes registration(registrationBytes());
  size_t got = 0;
  while (got < registration.size()) {
    ssize_t n = recv(fd, registration.data() + got, registration.size() - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  EXPECT_EQ(got, registration.size());
  ::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
  close(fd);
}

Bytes answerHeader(uint16_t status, uint32_t count) {
  WireWriter out;
  out.u32(kRegisterMagic);
  out.u16(kBootstrapWireVersion);
  out.u16(status);
  out.u32(count);
  return out.bytes();
}

TEST(HostileInput, RankRefusesMalformedRootAnswers) {
  struct Case {
    Bytes answer;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {answerHeader(1, 0xffffffffu), "malformed rendezvous error"},
      {answerHeader(0, 0x7fffffffu), "malformed rendezvous answer (status 0, 2147483647 ranks)"},
      {answerHeader(7, 2), "malformed rendezvous answer (status 7, 2 ranks)"},
      {garbage(64, 5), "is not a hoop rendezvous of this version"},
      {answerHeader(0, 2), "connection closed"},
  };
  for (const Case& c : cases) {
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    ASSERT_EQ(listen(listener, 4), 0);
    socklen_t length = sizeof(address);
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
    const int port = ntohs(address.sin_port);

    ProcessGroup rank;
    Env env = jobEnv(1, 2, port, "");
    env["HOOP_INIT_TIMEOUT"] = "20";
    rank.start({HOOP_SECURITY_WORKER}, env);
    answerOneRegistration(listener, c.answer);
    auto results = rank.wait(std::chrono::seconds(60));
    close(listener);
    EXPECT_EQ(results[0].status, 3) << results[0].output;
    EXPECT_NE(results[0].output.find("INIT FAILED"), std::string::npos) << results[0].output;
    EXPECT_NE(results[0].output.find(c.expected), std::string::npos) << results[0].output;
  }
}

}  // namespace
}  // namespace hoop::test
