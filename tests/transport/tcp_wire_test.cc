// The TCP transport's parsers and wire (src/transport/tcp): socket addresses, interface filters,
// frame headers (a TcpConnection over a socketpair gets garbage, lies and hang-ups), and the
// listener's admission of a rank's peer among strangers.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/secret.h"
#include "transport/tcp/interfaces.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_transport.h"

namespace hoop {
namespace {

TEST(Address, ParseGoodAndBad) {
  EXPECT_EQ(SocketAddress::parse("127.0.0.1:80").port(), 80);
  EXPECT_TRUE(SocketAddress::parse("127.0.0.1:80").isLoopback());
  EXPECT_THROW(SocketAddress::parse("127.0.0.1"), Error);
  EXPECT_THROW(SocketAddress::parse("127.0.0.1:99999"), Error);
  EXPECT_THROW(SocketAddress::parse("[::1"), Error);
}

TEST(Interfaces, FilterGrammar) {
  EXPECT_TRUE(InterfaceFilter("eth").accepts("eth0"));
  EXPECT_FALSE(InterfaceFilter("eth").accepts("lo"));
  EXPECT_TRUE(InterfaceFilter("=lo").accepts("lo"));
  EXPECT_FALSE(InterfaceFilter("=eth").accepts("eth0"));
  EXPECT_FALSE(InterfaceFilter("^docker,lo").accepts("docker0"));
  EXPECT_TRUE(InterfaceFilter("^docker,lo").accepts("eth1"));
  EXPECT_FALSE(InterfaceFilter("^=lo").accepts("lo"));
  EXPECT_TRUE(InterfaceFilter("^=lo").accepts("lo2"));
}

TEST(Interfaces, UnknownNameIsAnImmediateError) {
  setenv("HOOP_SOCKET_IFNAME", "=nosuchif9", 1);
  try {
    chooseListenAddress(nullptr);
    FAIL() << "no error for a missing interface";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("nosuchif9"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("lo"), std::string::npos);  // lists what exists
  }
  setenv("HOOP_SOCKET_IFNAME", "=lo", 1);
  EXPECT_TRUE(chooseListenAddress(nullptr).isLoopback());
}

// One end is a TcpConnection, the other a raw socket the test writes to.
class FramesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
    std::vector<UniqueFd> streams;
    streams.emplace_back(fds[0]);
    raw_ = UniqueFd(fds[1]);
    connection_ = std::make_unique<TcpConnection>(std::move(streams), 0, "rank 1 (test)");
  }
  void sendRaw(const void* data, size_t bytes) {
    ASSERT_EQ(::send(raw_.get(), data, bytes, 0), static_cast<ssize_t>(bytes));
  }
  void sendFrame(FrameTag tag, const std::vector<char>& payload) {
    uint8_t header[FrameHeader::kBytes];
    FrameHeader::encode(header, tag, payload.size());
    sendRaw(header, sizeof(header));
    if (!payload.empty()) sendRaw(payload.data(), payload.size());
  }
  // Progresses until the receive completes or an error is thrown.
  void drive() {
    for (int i = 0; i < 1000 && connection_->recvsCompleted() < connection_->recvsPosted(); ++i) {
      connection_->progress();
    }
  }
  std::string errorOf(hoopResult_t expectedCode) {
    try {
      drive();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), expectedCode) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }

  UniqueFd raw_;
  std::unique_ptr<TcpConnection> connection_;
};

TEST_F(FramesTest, MatchingFrameArrives) {
  std::vector<char> buffer(5);
  connection_->postRecv(buffer.data(), 5, {OpKind::kAllReduce, 9});
  sendFrame({OpKind::kAllReduce, 9}, {'h', 'e', 'l', 'l', 'o'});
  drive();
  EXPECT_EQ(connection_->recvsCompleted(), 1u);
  EXPECT_EQ(std::string(buffer.begin(), buffer.end()), "hello");
}

TEST_F(FramesTest, GarbageIsRejected) {
  std::vector<char> buffer(64);
  connection_->postRecv(buffer.data(), buffer.size(), {OpKind::kAllReduce, 0});
  std::string garbage(80, 'x');
  sendRaw(garbage.data(), garbage.size());
  EXPECT_NE(errorOf(hoopRemoteError).find("garbage"), std::string::npos);
}

TEST_F(FramesTest, OtherCollectiveIsInvalidUsage) {
  std::vector<char> buffer(4);
  connection_->postRecv(buffer.data(), 4, {OpKind::kAllReduce, 3});
  sendFrame({OpKind::kBroadcast, 3}, {1, 2, 3, 4});
  std::string message = errorOf(hoopInvalidUsage);
  EXPECT_NE(message.find("allreduce #3"), std::string::npos) << message;
  EXPECT_NE(message.find("broadcast #3"), std::string::npos) << message;
  EXPECT_NE(message.find("rank 1"), std::string::npos) << message;
}

TEST_F(FramesTest, OtherCountIsInvalidUsage) {
  std::vector<char> buffer(8);
  connection_->postRecv(buffer.data(), 8, {OpKind::kAllReduce, 0});
  sendFrame({OpKind::kAllReduce, 0}, {1, 2, 3, 4});
  EXPECT_NE(errorOf(hoopInvalidUsage).find("expected 8 bytes"), std::string::npos);
}

TEST_F(FramesTest, HangUpIsRemoteError) {
  std::vector<char> buffer(8);
  connection_->postRecv(buffer.data(), 8, {OpKind::kAllReduce, 0});
  raw_.reset();
  EXPECT_NE(errorOf(hoopRemoteError).find("closed"), std::string::npos);
}

TEST_F(FramesTest, ManyFramesInOneSendAndOrder) {
  std::vector<std::vector<char>> buffers(50, std::vector<char>(3));
  for (int i = 0; i < 50; ++i) {
    connection_->postRecv(buffers[i].data(), 3, {OpKind::kSendRecv, static_cast<uint32_t>(i)});
  }
  for (int i = 0; i < 50; ++i) {
    sendFrame({OpKind::kSendRecv, static_cast<uint32_t>(i)},
              {static_cast<char>(i), static_cast<char>(i + 1), static_cast<char>(i + 2)});
  }
  drive();
  ASSERT_EQ(connection_->recvsCompleted(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(buffers[i][2], static_cast<char>(i + 2));
}

}  // namespace
}  // namespace hoop

namespace hoop {
namespace {

// A rank's listener takes its peer's streams and drops strangers: garbage, a wrong secret, a
// hello meant for another rank, one claiming a rank that should connect the other way.
TEST(TcpTransportAdmission, StrangersAreDroppedAndThePeerGetsThrough) {
  setenv("HOOP_SOCKET_IFNAME", "=lo", 1);
  Secret secret = Secret::random();
  auto listenerFor = [] {
    SocketAddress address = SocketAddress::parse("127.0.0.1:0");
    return listenOn(address, 64, false);
  };
  UniqueFd listener0 = listenerFor();
  UniqueFd listener1 = listenerFor();
  std::vector<TcpPeer> peers = {{SocketAddress::localOf(listener0.get()), "rank 0"},
                                {SocketAddress::localOf(listener1.get()), "rank 1"}};
  TcpOptions options0{0, secret, 7, 2, 0, ""};
  TcpOptions options1{1, secret, 7, 2, 0, ""};
  TcpTransport rank0(options0, std::move(listener0), peers);
  TcpTransport rank1(options1, std::move(listener1), peers);
  const auto deadline = Clock::now() + std::chrono::seconds(10);

  // Strangers knock on rank 1 first.
  UniqueFd garbage = connectWithRetry(peers[1].address, deadline, nullptr, "rank 1");
  std::string junk(100, 'z');
  ASSERT_GT(::send(garbage.get(), junk.data(), junk.size(), MSG_NOSIGNAL), 0);
  TcpOptions impostor{0, Secret::random(), 7, 1, 0, ""};
  TcpTransport wrongSecret(impostor, listenerFor(), peers);
  auto unused = wrongSecret.establish(1, deadline, nullptr);  // connects; rank 1 must refuse it
  UniqueFd silent = connectWithRetry(peers[1].address, deadline, nullptr, "rank 1");

  std::unique_ptr<TcpConnection> fromZero;
  std::thread acceptor([&] { fromZero = rank1.establish(0, deadline, nullptr); });
  auto toOne = rank0.establish(1, deadline, nullptr);
  acceptor.join();
  ASSERT_NE(fromZero, nullptr);
  EXPECT_EQ(fromZero->streamCount(), 2u);

  // The connection that got through is the real one: a message crosses intact.
  char sent[6] = "hello";
  char received[6] = {};
  toOne->postSend(sent, 6, {OpKind::kSendRecv, 0});
  fromZero->postRecv(received, 6, {OpKind::kSendRecv, 0});
  for (int i = 0; i < 100000 && fromZero->recvsCompleted() == 0; ++i) {
    toOne->progress();
    fromZero->progress();
  }
  EXPECT_STREQ(received, "hello");
}

}  // namespace
}  // namespace hoop
