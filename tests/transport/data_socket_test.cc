// HOOP_SOCKET_CONGESTION and HOOP_SOCKET_NOTSENT_LOWAT: what the settings accept, what the kernel
// refuses, and that the data sockets a TcpTransport makes carry the options it was given.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "config_outcome.h"
#include "core/config.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_transport.h"

namespace hoop {
namespace {

// Config::fromEnvironment with HOOP_SOCKET_CONGESTION=`text`: the congestion control it keeps,
// or the error's text.
std::string congestionFor(const char* text) {
  return test::configOutcome("HOOP_SOCKET_CONGESTION", text, [](const Config& config) {
    return "kept '" + config.socketCongestion + "'";
  });
}

// The kernel's own congestion control (stored empty) unless the setting names one.
TEST(SocketCongestion, TheKernelsUnlessTheSettingSaysOtherwise) {
  unsetenv("HOOP_SOCKET_CONGESTION");
  EXPECT_EQ(Config::fromEnvironment().socketCongestion, "");
  EXPECT_EQ(Config::fromEnvironment().dataSocketTuning().congestion, "");
  EXPECT_EQ(congestionFor("reno"), "kept 'reno'");
  EXPECT_EQ(congestionFor("cubic"), "kept 'cubic'");
  EXPECT_EQ(congestionFor("system"), "kept ''");
  EXPECT_EQ(congestionFor(""), "kept ''");  // empty is unset, as for every setting
  const std::string outcome = congestionFor("sixteen_letters_");
  EXPECT_NE(outcome.find("HOOP_SOCKET_CONGESTION='sixteen_letters_' is not"), std::string::npos)
      << outcome;
}

// Config::fromEnvironment with HOOP_SOCKET_NOTSENT_LOWAT=`text`: the limit it keeps, or the
// error's text.
std::string notsentLowatFor(const char* text) {
  return test::configOutcome("HOOP_SOCKET_NOTSENT_LOWAT", text, [](const Config& config) {
    return std::to_string(config.socketNotsentLowatBytes);
  });
}

TEST(SocketNotsentLowat, A128KibLimitUnlessTheSettingSaysOtherwise) {
  unsetenv("HOOP_SOCKET_NOTSENT_LOWAT");
  EXPECT_EQ(Config::fromEnvironment().socketNotsentLowatBytes, 128 << 10);
  EXPECT_EQ(Config::fromEnvironment().dataSocketTuning().notsentLowatBytes, 128 << 10);
  EXPECT_EQ(notsentLowatFor("16K"), "16384");
  EXPECT_EQ(notsentLowatFor("0"), "0");  // the kernel's default: no limit
  for (const char* bad : {"-1", "lots", "2G"}) {
    const std::string outcome = notsentLowatFor(bad);
    EXPECT_NE(outcome.find("HOOP_SOCKET_NOTSENT_LOWAT"), std::string::npos)
        << bad << ": " << outcome;
  }
}

TEST(SocketCongestion, ANameTheKernelRefusesIsAClearError) {
  EXPECT_NO_THROW(checkCongestionControl("reno"));  // always built in and always allowed
  try {
    checkCongestionControl("no_such_cc");
    FAIL() << "the kernel took a congestion control that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("HOOP_SOCKET_CONGESTION=no_such_cc: the kernel refused"),
              std::string::npos)
        << e.what();
  }
}

int notsentLowatOf(int fd) {
  int bytes = 0;
  socklen_t length = sizeof(bytes);
  EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, &length), 0);
  return bytes;
}

std::string congestionOf(int fd) {
  char name[16] = {};
  socklen_t length = sizeof(name);
  EXPECT_EQ(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length), 0);
  return std::string(name, strnlen(name, sizeof(name)));
}

// A congestion control this process may choose other than the kernel's default, so that the
// test sees the transport's choice and not the default (empty: there is none).
std::string anotherAllowedCongestion() {
  const UniqueFd probe(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const std::string kernelDefault = congestionOf(probe.get());
  std::ifstream allowedFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control");
  std::string name;
  while (allowedFile >> name) {
    if (name != kernelDefault) return name;
  }
  return "";
}

TEST(DataSockets, CarryTheTransportsCongestionControlAndUnsentLimit) {
  const std::string wanted = anotherAllowedCongestion();
  if (wanted.empty()) GTEST_SKIP() << "this kernel allows no congestion control but its default";
  setenv("HOOP_SOCKET_IFNAME", "=lo", 1);
  const Secret secret = Secret::random();
  UniqueFd listener0 = listenOn(SocketAddress::parse("127.0.0.1:0"), 64, false);
  UniqueFd listener1 = listenOn(SocketAddress::parse("127.0.0.1:0"), 64, false);
  const std::vector<TcpPeer> peers = {{SocketAddress::localOf(listener0.get()), "rank 0"},
                                      {SocketAddress::localOf(listener1.get()), "rank 1"}};
  // Neither the kernel's default (no limit) nor hoop's.
  constexpr int kLowat = 48 << 10;
  const DataSocketTuning tuning{0, wanted, kLowat};
  TcpTransport rank0(TcpOptions{0, secret, 7, 2, tuning}, std::move(listener0), peers);
  TcpTransport rank1(TcpOptions{1, secret, 7, 2, tuning}, std::move(listener1), peers);
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  std::unique_ptr<TcpConnection> accepted;
  std::thread acceptor([&] { accepted = rank1.establish(0, deadline, nullptr); });
  std::unique_ptr<TcpConnection> connected = rank0.establish(1, deadline, nullptr);
  acceptor.join();
  ASSERT_NE(accepted, nullptr);

  // Receives posted on both streams put their sockets among the connection's wait descriptors.
  char unused[2][4];
  for (TcpConnection* side : {connected.get(), accepted.get()}) {
    for (char* into : unused) side->postRecv(into, sizeof(unused[0]), {OpKind::kSendRecv, 0});
    std::vector<pollfd> fds;
    side->addWaitFds(fds);
    ASSERT_EQ(fds.size(), 2u);
    for (const pollfd& fd : fds) {
      EXPECT_EQ(congestionOf(fd.fd), wanted);
      EXPECT_EQ(notsentLowatOf(fd.fd), kLowat);
    }
  }
}

}  // namespace
}  // namespace hoop
