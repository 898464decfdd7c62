// The RDMA data path over a real verbs device: two connections in one process, joined through
// the device (Soft-RoCE in CI's guest, any InfiniBand or RoCE port elsewhere). Skips, saying
// why, where no usable port exists. Every byte is compared exactly.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <numeric>
#include <thread>
#include <vector>

#include "base/error.h"
#include "transport/capabilities.h"
#include "transport/rdma/rdma_device.h"
#include "transport/rdma/rdma_setup.h"
#include "transport/rdma/verbs_objects.h"
#include "transport/tcp/tcp_connection.h"

#if defined(HOOP_HAVE_VERBS)
#include "transport/rdma/rdma_connection.h"
#endif

namespace hoop {
namespace {

// One end of a socketpair as a setup channel.
class SocketChannel : public SetupChannel {
 public:
  explicit SocketChannel(int fd) : fd_(fd) {}
  void send(const void* data, size_t bytes) override {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::write(fd_, p, bytes);
      if (n <= 0) fail(hoopRemoteError, "setup channel write failed");
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }
  void recv(void* data, size_t bytes) override {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::read(fd_, p, bytes);
      if (n <= 0) fail(hoopRemoteError, "setup channel closed");
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

// The setup carried by a pair's link, as the communicator's own channel does: the link then
// holds finished messages when the connection takes it over.
class LinkChannel : public SetupChannel {
 public:
  explicit LinkChannel(Connection& link) : link_(link) {}
  void send(const void* data, size_t bytes) override {
    const uint64_t ticket = link_.postSend(data, bytes, FrameTag{OpKind::kSetup, 0});
    while (link_.sendsCompleted() <= ticket) link_.progress();
  }
  void recv(void* data, size_t bytes) override {
    const uint64_t ticket = link_.postRecv(data, bytes, FrameTag{OpKind::kSetup, 0});
    while (link_.recvsCompleted() <= ticket) link_.progress();
  }

 private:
  Connection& link_;
};

size_t openFds() {
  size_t count = 0;
  if (DIR* dir = opendir("/proc/self/fd")) {
    while (readdir(dir) != nullptr) ++count;
    closedir(dir);
  }
  return count;
}

RdmaOptions smallRing(size_t queuePairs) {
  RdmaOptions options;
  options.queuePairs = queuePairs;
  options.slots = 4;
  options.slotBytes = 16 << 10;
  options.timeout = 12;
  options.retryCount = 2;
  options.probeInterval = std::chrono::milliseconds(50);
  if (const char* device = std::getenv("RDMA_DEVICE"))
    options.hca = HcaFilter::parse(str("=", device));
  return options;
}

struct Pair {
  std::unique_ptr<Connection> a;  // rank 0
  std::unique_ptr<Connection> b;  // rank 1
};

// Each side's pair TCP link, when `links`: a socketpair the connections keep and watch.
Pair connectPair(const RdmaOptions& options, MemoryRegistry* registryA = nullptr,
                 MemoryRegistry* registryB = nullptr, bool links = false) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    fail(hoopSystemError, "socketpair");
  SocketChannel channelA(fds[0]);
  SocketChannel channelB(fds[1]);
  std::unique_ptr<Connection> linkA, linkB;
  if (links) {
    int linkFds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, linkFds) != 0) {
      fail(hoopSystemError, "socketpair");
    }
    std::vector<UniqueFd> a, b;
    a.emplace_back(linkFds[0]);
    b.emplace_back(linkFds[1]);
    linkA = std::make_unique<TcpConnection>(std::move(a), 0, "rank 1 (test)");
    linkB = std::make_unique<TcpConnection>(std::move(b), 1, "rank 0 (test)");
  }
  auto request = [&](int self, MemoryRegistry* registry, std::unique_ptr<Connection>* link) {
    RdmaConnectRequest r;
    r.selfRank = self;
    r.peerRank = 1 - self;
    r.peer = str("rank ", 1 - self, " (test)");
    r.jobTag = 7;
    r.options = options;
    r.registry = registry;
    r.link = link;
    return r;
  };
  Pair pair;
  std::string errorB;
  // The links, when there are some, carry the setup as they do in a job.
  std::unique_ptr<SetupChannel> overLinkA, overLinkB;
  if (links) {
    overLinkA = std::make_unique<LinkChannel>(*linkA);
    overLinkB = std::make_unique<LinkChannel>(*linkB);
  }
  SetupChannel& setupA = links ? *overLinkA : static_cast<SetupChannel&>(channelA);
  SetupChannel& setupB = links ? *overLinkB : static_cast<SetupChannel&>(channelB);
  std::thread other([&] {
    try {
      pair.b = connectRdma(request(1, registryB, &linkB), setupB);
    } catch (const Error& error) {
      errorB = error.what();
    }
  });
  std::string errorA;
  try {
    pair.a = connectRdma(request(0, registryA, &linkA), setupA);
  } catch (const Error& error) {
    errorA = error.what();
  }
  other.join();
  close(fds[0]);
  close(fds[1]);
  if (!errorA.empty() || !errorB.empty()) fail(hoopSystemError, errorA, " / ", errorB);
  return pair;
}

// Progresses both until `done`, at most 30 s.
void drive(Connection& a, Connection& b, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done()) {
    a.progress();
    b.progress();
    if (std::chrono::steady_clock::now() > deadline) fail(hoopTimeout, "the test's transfer hung");
  }
}

std::vector<char> pattern(size_t bytes, int seed) {
  std::vector<char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<char>((i * 131 + seed * 7) % 251);
  return data;
}

FrameTag tag(uint32_t seq) { return FrameTag{OpKind::kSendRecv, seq}; }

class RdmaLoopback : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(HOOP_HAVE_VERBS)
    GTEST_SKIP() << "built without libibverbs' headers";
#else
    const RdmaDiscovery found = discoverRdma(smallRing(1));
    if (found.ports.empty()) GTEST_SKIP() << "no usable RDMA port here: " << found.detail;
    baselineFds_ = openFds();
#endif
  }
  void TearDown() override {
    if (IsSkipped()) return;
    // Everything a test made is gone with its connections.
    EXPECT_EQ(liveVerbsObjects(), VerbsObjectCounts{});
    EXPECT_EQ(openFds(), baselineFds_);
  }
  size_t baselineFds_ = 0;
};

// Messages of every size class both ways at once: empty, inline, one slot, exactly a slot, a
// slot and a byte, several slots; enough of them to go round the 4-slot ring many times.
void exchangeEverySize(Connection& a, Connection& b) {
  const std::vector<size_t> sizes = {
      0, 1, 100, 4000, 16 << 10, (16 << 10) + 1, 3 * (16 << 10) + 17};
  uint32_t seq = 0;
  for (int round = 0; round < 3; ++round) {
    for (size_t bytes : sizes) {
      const auto fromA = pattern(bytes, static_cast<int>(seq));
      const auto fromB = pattern(bytes, static_cast<int>(seq) + 1);
      std::vector<char> atA(bytes, 0), atB(bytes, 0);
      const uint64_t r1 = b.postRecv(atB.data(), bytes, tag(seq));
      const uint64_t r2 = a.postRecv(atA.data(), bytes, tag(seq));
      const uint64_t s1 = a.postSend(fromA.data(), bytes, tag(seq));
      const uint64_t s2 = b.postSend(fromB.data(), bytes, tag(seq));
      drive(a, b, [&] {
        return b.recvsCompleted() > r1 && a.recvsCompleted() > r2 && a.sendsCompleted() > s1 &&
               b.sendsCompleted() > s2;
      });
      ASSERT_EQ(atB, fromA) << bytes << " bytes, round " << round;
      ASSERT_EQ(atA, fromB) << bytes << " bytes, round " << round;
      ++seq;
    }
  }
}

TEST_F(RdmaLoopback, EverySizeBothWaysOnOneQueuePair) {
  Pair pair = connectPair(smallRing(1));
  exchangeEverySize(*pair.a, *pair.b);
}

TEST_F(RdmaLoopback, EverySizeBothWaysOnFourQueuePairs) {
  Pair pair = connectPair(smallRing(4));
#if defined(HOOP_HAVE_VERBS)
  EXPECT_EQ(static_cast<RdmaConnection&>(*pair.a).queuePairCount(), 4u);
#endif
  exchangeEverySize(*pair.a, *pair.b);
}

TEST_F(RdmaLoopback, ManyMessagesInFlight) {
  Pair pair = connectPair(smallRing(2));
  constexpr size_t kMessages = 200;
  std::vector<std::vector<char>> sent, received;
  for (size_t i = 0; i < kMessages; ++i) {
    sent.push_back(pattern(i * 97 % 5000, static_cast<int>(i)));
    received.emplace_back(sent.back().size(), 0);
  }
  for (size_t i = 0; i < kMessages; ++i) {
    pair.b->postRecv(received[i].data(), received[i].size(), tag(static_cast<uint32_t>(i)));
    pair.a->postSend(sent[i].data(), sent[i].size(), tag(static_cast<uint32_t>(i)));
  }
  drive(*pair.a, *pair.b, [&] {
    return pair.b->recvsCompleted() == kMessages && pair.a->sendsCompleted() == kMessages;
  });
  for (size_t i = 0; i < kMessages; ++i) ASSERT_EQ(received[i], sent[i]) << "message " << i;
}

TEST_F(RdmaLoopback, InPlaceReceiveAndDirectSend) {
  Pair pair = connectPair(smallRing(2));
  DirectSend* direct = pair.a->directSend();
  InPlaceReceive* inPlace = pair.b->inPlaceReceive();
  ASSERT_NE(direct, nullptr);
  ASSERT_NE(inPlace, nullptr);
  EXPECT_TRUE(inPlace->canPeek(16 << 10));
  EXPECT_FALSE(inPlace->canPeek((16 << 10) + 1));
  for (uint32_t seq = 0; seq < 20; ++seq) {
    const size_t bytes = 64 * (seq + 1);
    const auto data = pattern(bytes, static_cast<int>(seq));
    void* slot = nullptr;
    drive(*pair.a, *pair.b, [&] { return (slot = direct->sendSlot(bytes)) != nullptr; });
    std::memcpy(slot, data.data(), bytes);
    direct->publishSend(bytes, tag(seq));
    const void* landed = nullptr;
    drive(*pair.a, *pair.b,
          [&] { return (landed = inPlace->peekRecv(bytes, tag(seq))) != nullptr; });
    ASSERT_EQ(reinterpret_cast<uintptr_t>(landed) % 64, 0u);
    ASSERT_EQ(std::memcmp(landed, data.data(), bytes), 0) << "message " << seq;
    inPlace->releasePeeked();
  }
  EXPECT_EQ(pair.a->sendsCompleted(), 20u);
  EXPECT_EQ(pair.b->recvsCompleted(), 20u);
}

TEST_F(RdmaLoopback, RegisteredBuffersGoStraightBetweenThem) {
  MemoryRegistry registryA, registryB;
  Pair pair = connectPair(smallRing(3), &registryA, &registryB);
  const size_t bytes = (3 << 20) + 4096 + 5;  // several stripes, one not a page multiple
  auto source = pattern(bytes, 3);
  std::vector<char> target(bytes, 0);
  const uint64_t sourceHandle = registryA.add(source.data(), source.size());
  const uint64_t targetHandle = registryB.add(target.data(), target.size());
  for (uint32_t seq = 0; seq < 3; ++seq) {
    std::fill(target.begin(), target.end(), 0);
    source[seq] = static_cast<char>(seq + 1);
    const uint64_t r = pair.b->postRecv(target.data(), bytes, tag(seq));
    const uint64_t s = pair.a->postSend(source.data(), bytes, tag(seq));
    drive(*pair.a, *pair.b,
          [&] { return pair.b->recvsCompleted() > r && pair.a->sendsCompleted() > s; });
    ASSERT_EQ(target, source) << "message " << seq;
  }
#if defined(HOOP_HAVE_VERBS)
  EXPECT_EQ(static_cast<RdmaConnection&>(*pair.a).rendezvousSends(), 3u);
  EXPECT_EQ(static_cast<RdmaConnection&>(*pair.b).rendezvousRecvs(), 3u);
#endif
  // The receiver's buffer unregistered: the sender announces, is declined, and streams.
  registryB.remove(targetHandle);
  std::fill(target.begin(), target.end(), 0);
  const uint64_t r = pair.b->postRecv(target.data(), bytes, tag(9));
  const uint64_t s = pair.a->postSend(source.data(), bytes, tag(9));
  drive(*pair.a, *pair.b,
        [&] { return pair.b->recvsCompleted() > r && pair.a->sendsCompleted() > s; });
  EXPECT_EQ(target, source);
#if defined(HOOP_HAVE_VERBS)
  EXPECT_EQ(static_cast<RdmaConnection&>(*pair.a).rendezvousSends(), 3u);
#endif
  pair = {};
  registryA.remove(sourceHandle);
}

TEST_F(RdmaLoopback, AnotherCallIsNamed) {
  Pair pair = connectPair(smallRing(1));
  std::vector<char> data(100, 1), into(100);
  pair.b->postRecv(into.data(), into.size(), FrameTag{OpKind::kAllReduce, 6});
  pair.a->postSend(data.data(), data.size(), FrameTag{OpKind::kAllReduce, 5});
  try {
    drive(*pair.a, *pair.b, [] { return false; });
    FAIL() << "a mismatched call went through";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(error.what())
                  .find("rank 1 is in allreduce #6 but rank 0 (test) sent "
                        "data for allreduce #5"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(RdmaLoopback, APeerThatIsGoneFailsTheWaitWithItsName) {
  Pair pair = connectPair(smallRing(2));
  std::vector<char> into(100);
  pair.a->postRecv(into.data(), into.size(), tag(0));
  pair.b.reset();  // its queue pairs are destroyed: nothing answers any more
  const auto start = std::chrono::steady_clock::now();
  try {
    const auto deadline = start + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      pair.a->progress();
      std::vector<pollfd> fds;
      pair.a->addWaitFds(fds);
      ::poll(fds.data(), fds.size(), 10);
    }
    FAIL() << "no failure within 30 s";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopRemoteError);
    const std::string text = error.what();
    EXPECT_NE(text.find("RDMA to rank 1 (test) failed"), std::string::npos) << text;
    EXPECT_NE(text.find("stopped answering"), std::string::npos) << text;
    EXPECT_NE(text.find("waiting for send/recv #0 data from it"), std::string::npos) << text;
  }
  // Every later call says the same.
  EXPECT_THROW(pair.a->progress(), Error);
}

TEST_F(RdmaLoopback, ASenderThatLeavesAtOnceStillDelivers) {
  // Sends count as complete once queued; a sender that then closes its connection (its process
  // ends) must not take the bytes with it, and the receiver must take them before it calls the
  // peer gone.
  Pair pair = connectPair(smallRing(2), nullptr, nullptr, /*links=*/true);
  // A slot, an inline message and two slots: the 4-slot ring, filled with no credit back.
  const std::vector<size_t> sizes = {16 << 10, 100, 2 * (16 << 10)};
  std::vector<std::vector<char>> sent;
  for (uint32_t seq = 0; seq < sizes.size(); ++seq) {
    sent.push_back(pattern(sizes[seq], static_cast<int>(seq)));
    const uint64_t ticket = pair.a->postSend(sent.back().data(), sizes[seq], tag(seq));
    while (pair.a->sendsCompleted() <= ticket) pair.a->progress();
  }
  pair.a.reset();
  for (uint32_t seq = 0; seq < sizes.size(); ++seq) {
    std::vector<char> into(sizes[seq]);
    const uint64_t ticket = pair.b->postRecv(into.data(), into.size(), tag(seq));
    while (pair.b->recvsCompleted() <= ticket) {
      pair.b->progress();
      std::vector<pollfd> fds;
      pair.b->addWaitFds(fds);
    }
    ASSERT_EQ(into, sent[seq]) << "message " << seq;
  }
}

TEST_F(RdmaLoopback, APeerWhoseProcessEndsIsNamedAtOnce) {
  // With the pair's link kept, the peer's end closing it (as its process's exit does) ends the
  // wait at the next sleep, long before the queue pairs' retries would.
  Pair pair = connectPair(smallRing(1), nullptr, nullptr, /*links=*/true);
  // First, traffic as usual: the link, idle since the setup, says nothing.
  exchangeEverySize(*pair.a, *pair.b);
  std::vector<char> into(100);
  pair.a->postRecv(into.data(), into.size(), FrameTag{OpKind::kAllReduce, 3});
  pair.b.reset();
  try {
    for (int pass = 0; pass < 1000; ++pass) {
      pair.a->progress();
      std::vector<pollfd> fds;
      pair.a->addWaitFds(fds);
      ::poll(fds.data(), fds.size(), 10);
    }
    FAIL() << "the closed link went unnoticed";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopRemoteError);
    const std::string text = error.what();
    EXPECT_NE(text.find("rank 1 (test) closed its connection"), std::string::npos) << text;
    EXPECT_NE(text.find("waiting for allreduce #3 data from it"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace hoop
