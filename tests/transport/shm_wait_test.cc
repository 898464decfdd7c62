// Sleeping on a shared-memory connection: the futex word protocol of ShmConnection::waitWord.
// The waiting loop below is the one the communicator runs, reduced to one connection.
#include <gtest/gtest.h>

#include <cstring>

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

// Eager exchanges (the one-shot allreduce's) between two sides that sleep whenever the peer's
// message is not there yet, each pass in the order the communicator's wait runs it: snapshot the
// word, progress, send and look, then announce the sleep and sleep. A send leaves its wake-up
// owed (ShmConnection::finishWakeUp), so each side must finish it before it sleeps; otherwise
// both can end up asleep, each waiting for the message the other just sent. It also caught a
// wake that came between a sleeper's announcement and its FUTEX_WAIT and was counted as
// delivered (see ShmConnection::finishWakeUp). Counts this side's sleeps in `sleeps`; a sleep
// that runs into its 5 s limit is a lost wake-up (thrown).
void exchangeWhileSleeping(ShmConnection& connection, int direction, size_t messages,
                           size_t& sleeps) {
  for (size_t m = 0; m < messages; ++m) {
    const EagerCall call{
        {OpKind::kAllReduce, static_cast<uint32_t>(m)}, DataType::kUint64, RedOp::kSum, 1, 8};
    const uint64_t mine = 2 * m + static_cast<uint64_t>(direction);
    bool sent = false;
    const void* theirs = nullptr;
    while (true) {
      const uint32_t seen = connection.waitWord()->load(std::memory_order_acquire);
      connection.progress();
      if (!sent) sent = connection.tryEagerSend(&mine, call);
      if (theirs == nullptr) theirs = connection.peekEager(call);
      if (sent && theirs != nullptr) break;
      std::vector<pollfd> fds;
      connection.addWaitFds(fds);
      ++sleeps;
      if (!futexWaitShared(*connection.waitWord(), seen, std::chrono::seconds(5))) {
        const uint32_t now = connection.waitWord()->load(std::memory_order_acquire);
        const bool arrived = connection.peekEager(call) != nullptr;
        throw std::runtime_error(
            "side " + std::to_string(direction) + ", message " + std::to_string(m) +
            ": asleep for 5 s, a lost wake-up (wait word " + std::to_string(seen) + " when it " +
            "slept, " + std::to_string(now) + " now; the message " +
            (arrived ? "had arrived" : "had not arrived") + ")");
      }
    }
    uint64_t got = 0;
    std::memcpy(&got, theirs, sizeof(got));
    if (got != 2 * m + static_cast<uint64_t>(1 - direction)) {
      throw std::runtime_error("message " + std::to_string(m) + ": got " + std::to_string(got));
    }
    connection.releaseEager();
    connection.finishWakeUp();
  }
}

TEST(ShmWait, EagerExchangesBetweenSleepersLoseNoWakeUp) {
  constexpr size_t kMessages = 10000;
  ShmOptions options;
  auto pair = connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel&) {
    size_t sleeps = 0;
    exchangeWhileSleeping(connection, 1, kMessages, sleeps);
  });
  size_t sleeps = 0;
  std::string failure;
  try {
    exchangeWhileSleeping(*pair.connection, 0, kMessages, sleeps);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // The child gives up after its own 5 s sleep, so both sides' reports arrive.
  ChildResult child = pair.child->join(std::chrono::seconds(60));
  EXPECT_EQ(failure, "");
  EXPECT_EQ(child.status, 0) << child.report;
  if (failure.empty()) {
    EXPECT_GT(sleeps, 0u) << "never slept: the test did not exercise the sleep path";
  }
  std::cout << "slept " << sleeps << " times in " << kMessages << " exchanges\n";
}

// An eager send leaves its wake-up owed: a peer already asleep on the message stays asleep
// until finishWakeUp(), and is woken by it, not by its sleep's limit.
TEST(ShmWait, EagerSendWakesASleeperAtFinishWakeUp) {
  const EagerCall call{{OpKind::kAllReduce, 0}, DataType::kUint64, RedOp::kSum, 1, 8};
  auto pair = connectPair(
      ShmOptions{}, ShmOptions{}, [&](ShmConnection& connection, SocketSetupChannel& channel) {
        const uint32_t seen = connection.waitWord()->load(std::memory_order_acquire);
        require(connection.peekEager(call) == nullptr, "the message is there before it was sent");
        std::vector<pollfd> fds;
        connection.addWaitFds(fds);
        channel.sendU64(1);  // about to sleep
        const bool woken = futexWaitShared(*connection.waitWord(), seen, std::chrono::seconds(3));
        channel.sendU64(woken ? monotonicNanos() : 0);
        const void* data = connection.peekEager(call);
        require(data != nullptr, "woken, but the message is not there");
        uint64_t value = 0;
        std::memcpy(&value, data, sizeof(value));
        require(value == 42, "message holds " + std::to_string(value));
        connection.releaseEager();
      });
  ShmConnection& connection = *pair.connection;
  pair.channel().recvU64();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the child is asleep by now
  const uint64_t value = 42;
  ASSERT_TRUE(connection.tryEagerSend(&value, call));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const uint64_t finishedAt = monotonicNanos();
  connection.finishWakeUp();
  const uint64_t wokenAt = pair.channel().recvU64();
  EXPECT_NE(wokenAt, 0u) << "the sleeper ran into its 3 s limit: finishWakeUp did not wake it";
  EXPECT_GE(wokenAt, finishedAt) << "woken by the send itself: its wake-up was not left owed";
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
