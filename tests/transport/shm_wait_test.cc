// Sleeping on a shared-memory connection: the futex word protocol of ShmConnection::waitWord.
// The waiting loop below is the one the communicator runs, reduced to one connection.
#include <gtest/gtest.h>

#include "shm_test_util.h"
#include "transport/shm/futex.h"

namespace hoop::test {
namespace {

struct Sleeps {
  int count = 0;
  std::chrono::nanoseconds longest{0};
  uint64_t lastWokenAt = 0;  // monotonicNanos when the last sleep ended
  bool timedOut = false;
};

// Runs the connection to idle, sleeping on its wait word whenever nothing moves. `announce`
// false leaves out the announcement (addWaitFds), to show that no wake comes without it.
Sleeps runSleeping(ShmConnection& connection, std::chrono::milliseconds sleepLimit,
                   bool announce = true) {
  Sleeps sleeps;
  while (!connection.idle()) {
    uint32_t seen = connection.waitWord()->load(std::memory_order_acquire);
    if (connection.progress()) continue;
    std::vector<pollfd> fds;
    if (announce) connection.addWaitFds(fds);
    EXPECT_TRUE(fds.empty());
    auto start = std::chrono::steady_clock::now();
    bool woken = futexWaitShared(*connection.waitWord(), seen, sleepLimit);
    sleeps.lastWokenAt = monotonicNanos();
    sleeps.longest = std::max(sleeps.longest, std::chrono::steady_clock::now() - start);
    ++sleeps.count;
    if (!woken) {
      sleeps.timedOut = true;
      break;
    }
  }
  return sleeps;
}

ShmOptions smallRing() {
  ShmOptions options;
  options.slots = 1;
  options.slotBytes = 4096;
  options.useCma = false;
  return options;
}

TEST(ShmWait, SleepingReceiverIsWokenBySender) {
  auto pair = connectPair(
      smallRing(), smallRing(), [](ShmConnection& connection, SocketSetupChannel& channel) {
        channel.recvU64();                                           // the parent is about to sleep
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // and now it does
        uint64_t sentAt = monotonicNanos();
        connection.postSend(&sentAt, sizeof(sentAt), {OpKind::kSendRecv, 0});
        driveUntilIdle(connection);
        channel.recvU64();
      });
  uint64_t sentAt = 0;
  pair.connection->postRecv(&sentAt, sizeof(sentAt), {OpKind::kSendRecv, 0});
  pair.channel().sendU64(1);
  Sleeps sleeps = runSleeping(*pair.connection, std::chrono::seconds(2));
  pair.channel().sendU64(1);
  EXPECT_FALSE(sleeps.timedOut) << "slept through the sender's publish: lost wake-up";
  EXPECT_GE(sleeps.longest, std::chrono::milliseconds(10)) << "never really slept";
  // Woken by the send, not by the sleep's 2 s limit. The bound leaves room for a busy machine's
  // scheduler (tens of milliseconds under the full suite on 2 cores); the log shows the figure.
  auto wakeLatency = std::chrono::nanoseconds(sleeps.lastWokenAt - sentAt);
  EXPECT_LT(wakeLatency, std::chrono::milliseconds(500));
  std::cout << "receiver woken " << wakeLatency.count() / 1000 << " us after the send\n";
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
}

TEST(ShmWait, SleepingSenderIsWokenByRelease) {
  auto pair = connectPair(
      smallRing(), smallRing(), [](ShmConnection& connection, SocketSetupChannel& channel) {
        channel.recvU64();  // the parent's ring is full and it is about to sleep
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::vector<uint8_t> in(2 * 4096);
        connection.postRecv(in.data(), 4096, {OpKind::kSendRecv, 0});
        connection.postRecv(in.data() + 4096, 4096, {OpKind::kSendRecv, 1});
        uint64_t releasedAt = monotonicNanos();
        driveUntilIdle(connection);
        channel.sendU64(releasedAt);
        channel.recvU64();
      });
  std::vector<uint8_t> out(2 * 4096, 1);
  ShmConnection& connection = *pair.connection;
  connection.postSend(out.data(), 4096, {OpKind::kSendRecv, 0});
  connection.postSend(out.data() + 4096, 4096, {OpKind::kSendRecv, 1});
  connection.progress();  // one slot: the second message must wait for the child's release
  EXPECT_EQ(connection.sendsCompleted(), 1u);
  pair.channel().sendU64(1);
  Sleeps sleeps = runSleeping(connection, std::chrono::seconds(2));
  uint64_t releasedAt = pair.channel().recvU64();
  pair.channel().sendU64(1);
  EXPECT_FALSE(sleeps.timedOut) << "slept through the receiver's release: lost wake-up";
  EXPECT_GE(sleeps.longest, std::chrono::milliseconds(10)) << "never really slept";
  EXPECT_LT(std::chrono::nanoseconds(sleeps.lastWokenAt - releasedAt),
            std::chrono::milliseconds(500));  // woken by the release, not the 2 s limit
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
}

// The other half of the contract: without an announced sleeper the peer makes no FUTEX_WAKE
// call (the hot path stays free of system calls), so an unannounced sleep lasts its timeout.
TEST(ShmWait, UnannouncedSleeperIsNotWoken) {
  auto pair = connectPair(smallRing(), smallRing(),
                          [](ShmConnection& connection, SocketSetupChannel& channel) {
                            channel.recvU64();
                            std::this_thread::sleep_for(std::chrono::milliseconds(30));
                            uint64_t value = 42;
                            connection.postSend(&value, sizeof(value), {OpKind::kSendRecv, 0});
                            driveUntilIdle(connection);
                            channel.recvU64();
                          });
  uint64_t value = 0;
  pair.connection->postRecv(&value, sizeof(value), {OpKind::kSendRecv, 0});
  pair.channel().sendU64(1);
  Sleeps sleeps = runSleeping(*pair.connection, std::chrono::milliseconds(300), /*announce=*/false);
  pair.channel().sendU64(1);
  EXPECT_TRUE(sleeps.timedOut) << "woken although no sleep was announced";
  driveUntilIdle(*pair.connection);
  EXPECT_EQ(value, 42u);
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
}

TEST(Futex, WaitReturnsAtOnceWhenTheWordMovedAndTimesOutOtherwise) {
  std::atomic<uint32_t> word{7};
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(futexWaitShared(word, 6, std::chrono::seconds(1)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));  // not 1 s
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(futexWaitShared(word, 7, std::chrono::milliseconds(20)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));
}

}  // namespace
}  // namespace hoop::test
