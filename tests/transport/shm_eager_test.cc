// Eager messages on a shared-memory connection (EagerMessages::tryEagerSend / peekEager): exact
// data in both directions, the two buffers' turn-taking, and calls that do not match, between
// two real processes.
#include <gtest/gtest.h>

#include "algorithms/collective.h"
#include "shm_test_util.h"
#include "transport/shm/shm_connection.h"

namespace hoop::test {
namespace {

EagerCall callOf(uint32_t seq, size_t bytes) {
  return {{OpKind::kAllReduce, seq}, DataType::kUint8, RedOp::kSum, bytes, bytes};
}

// The one-shot allreduce serves calls of up to kOneShotMaxBytes wherever every peer is over
// shared memory: this path must carry them.
static_assert(ShmLayout::kEagerBytes >= kOneShotMaxBytes);

size_t sizeOf(size_t message) { return (message * 977) % (ShmLayout::kEagerBytes + 1); }

// Both sides send message m, then read the other's m, 40 times: each buffer is reused 20 times.
TEST(ShmEager, ExchangesArriveExactlyBothWays) {
  constexpr size_t kMessages = 40;
  ShmOptions options;
  auto exchange = [](ShmConnection& connection, int direction) {
    for (size_t m = 0; m < kMessages; ++m) {
      const auto call = callOf(static_cast<uint32_t>(m), sizeOf(m));
      const std::vector<uint8_t> mine = pattern(direction, m, call.bytes);
      driveUntil(connection, [&] { return connection.tryEagerSend(mine.data(), call); });
      const void* theirs = nullptr;
      driveUntil(connection, [&] { return (theirs = connection.peekEager(call)) != nullptr; });
      const auto* bytes = static_cast<const uint8_t*>(theirs);
      const std::string diff =
          firstDifference({bytes, bytes + call.bytes}, pattern(1 - direction, m, call.bytes));
      if (!diff.empty()) throw std::runtime_error("message " + std::to_string(m) + ": " + diff);
      connection.releaseEager();
    }
  };
  auto pair = connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel&) {
    exchange(connection, 1);
  });
  EXPECT_NO_THROW(exchange(*pair.connection, 0));
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

// A writer may run one message ahead, never two: message 3 reuses message 1's buffer.
TEST(ShmEager, ThirdMessageWaitsUntilTheFirstIsRead) {
  ShmOptions options;
  auto pair = connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel& ch) {
    const std::vector<uint8_t> data = pattern(1, 0, 100);
    require(connection.tryEagerSend(data.data(), callOf(0, 100)), "message 1");
    require(connection.tryEagerSend(data.data(), callOf(1, 100)), "message 2");
    require(!connection.tryEagerSend(data.data(), callOf(2, 100)), "message 3 while 1 is unread");
    ch.sendU64(1);
    ch.recvU64();  // the parent has read message 1
    require(connection.tryEagerSend(data.data(), callOf(2, 100)), "message 3 after 1 was read");
    ch.sendU64(2);
  });
  ShmConnection& connection = *pair.connection;
  pair.channel().recvU64();
  const void* first = nullptr;
  driveUntil(connection, [&] { return (first = connection.peekEager(callOf(0, 100))) != nullptr; });
  EXPECT_EQ(connection.peekEager(callOf(0, 100)), first) << "held until released";
  connection.releaseEager();
  pair.channel().sendU64(1);
  pair.channel().recvU64();
  for (uint32_t m = 1; m <= 2; ++m) {
    const void* data = nullptr;
    driveUntil(connection,
               [&] { return (data = connection.peekEager(callOf(m, 100))) != nullptr; });
    connection.releaseEager();
  }
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

std::string invalidUsageOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.code() == hoopInvalidUsage ? e.what() : std::string("wrong code: ") + e.what();
  }
  return "no error";
}

TEST(ShmEager, OtherCountIsInvalidUsageNamingBothCalls) {
  ShmOptions options;
  auto pair = connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel& ch) {
    const std::vector<uint8_t> data(10, 1);
    require(connection.tryEagerSend(data.data(), callOf(7, 10)), "send");
    ch.recvU64();
  });
  const std::string message = invalidUsageOf([&] {
    driveUntil(*pair.connection,
               [&] { return pair.connection->peekEager(callOf(7, 20)) != nullptr; });
  });
  EXPECT_NE(message.find("rank 0 called allreduce #7 (20 x uint8, sum)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("rank 1 (test child) called allreduce #7 (10 x uint8, sum)"),
            std::string::npos)
      << message;
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

// One rank in a call that uses the eager buffers, the other in one that uses the slots: each
// side sees the other's message on the path it is not watching, and says so instead of hanging.
TEST(ShmEager, PeerOnTheSlotPathIsInvalidUsage) {
  ShmOptions options;
  auto pair = connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel& ch) {
    const std::vector<uint8_t> data(64, 1);
    connection.postSend(data.data(), data.size(), {OpKind::kReduce, 5});
    driveUntilIdle(connection);
    ch.recvU64();
  });
  const std::string message = invalidUsageOf([&] {
    driveUntil(*pair.connection,
               [&] { return pair.connection->peekEager(callOf(5, 64)) != nullptr; });
  });
  EXPECT_NE(message.find("rank 0 called allreduce #5 (64 x uint8, sum) but rank 1 (test child) "
                         "sent data for reduce #5 ("),
            std::string::npos)
      << message;
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

TEST(ShmEager, PeerOnTheEagerPathIsInvalidUsage) {
  ShmOptions options;
  auto pair = connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel& ch) {
    const std::vector<uint8_t> data(64, 1);
    require(connection.tryEagerSend(data.data(), callOf(5, 64)), "send");
    ch.recvU64();
  });
  std::vector<uint8_t> into(64);
  pair.connection->postRecv(into.data(), into.size(), {OpKind::kBroadcast, 5});
  const std::string message = invalidUsageOf([&] { driveUntilIdle(*pair.connection); });
  EXPECT_NE(message.find("rank 0 called broadcast #5 (0 x int8, root 0) but rank 1 (test child) "
                         "called allreduce #5 (64 x uint8, sum)"),
            std::string::npos)
      << message;
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

}  // namespace
}  // namespace hoop::test
