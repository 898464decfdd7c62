// What the shared-memory transport does when the other side misbehaves: calls that do not
// match, garbage in a slot, a peer that closes or dies mid-transfer.
#include <gtest/gtest.h>

#include "shm_test_util.h"
#include "transport/shm/peer_process.h"

namespace hoop::test {
namespace {

// Runs `receive` on the parent until it throws; returns the error (fails the test otherwise).
template <typename Receive>
Error expectError(Receive receive) {
  try {
    receive();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a hoop::Error";
  return Error(hoopSuccess, "");
}

bool contains(const Error& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

// The child sends one message (kind, seq, bytes); the parent posts a receive for another.
Error mismatch(FrameTag sent, size_t sentBytes, FrameTag expected, size_t expectedBytes,
               bool useCma) {
  ShmOptions options;
  options.useCma = useCma;
  options.cmaThresholdBytes = kTestCmaThreshold;
  auto pair =
      connectPair(options, options, [=](ShmConnection& connection, SocketSetupChannel& channel) {
        std::vector<uint8_t> data(sentBytes, 7);
        connection.postSend(data.data(), data.size(), sent);
        connection.progress();  // publishes it (the data, or where CMA finds it)
        channel.recvU64();  // keeps the buffer and the process alive until the parent has looked
      });
  std::vector<uint8_t> buffer(expectedBytes);
  Error error = expectError([&] {
    pair.connection->postRecv(buffer.data(), buffer.size(), expected);
    driveUntilIdle(*pair.connection, 5s);
  });
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
  return error;
}

TEST(ShmErrors, OtherCollectiveIsInvalidUsageNamingBoth) {
  Error e = mismatch({OpKind::kAllReduce, 5}, 100, {OpKind::kBroadcast, 5}, 100, false);
  EXPECT_EQ(e.code(), hoopInvalidUsage);
  EXPECT_TRUE(contains(e,
                       "rank 0 is in broadcast #5 but rank 1 (test child) sent data for "
                       "allreduce #5: ranks called collectives in a different order"))
      << e.what();
}

TEST(ShmErrors, OtherSequenceIsInvalidUsage) {
  Error e = mismatch({OpKind::kAllReduce, 6}, 100, {OpKind::kAllReduce, 5}, 100, false);
  EXPECT_EQ(e.code(), hoopInvalidUsage);
  EXPECT_TRUE(contains(e, "is in allreduce #5 but rank 1 (test child) sent data for allreduce #6"))
      << e.what();
}

TEST(ShmErrors, OtherLengthIsInvalidUsage) {
  Error e = mismatch({OpKind::kAllGather, 1}, 100, {OpKind::kAllGather, 1}, 200, false);
  EXPECT_EQ(e.code(), hoopInvalidUsage);
  EXPECT_TRUE(contains(e,
                       "rank 0 expected 200 bytes from rank 1 (test child) in allgather #1 but "
                       "got 100: ranks passed different counts or datatypes"))
      << e.what();
}

TEST(ShmErrors, OtherLengthOnTheCmaPathIsInvalidUsage) {
  Error e = mismatch({OpKind::kAllGather, 1}, 1 << 20, {OpKind::kAllGather, 1}, 2 << 20, true);
  EXPECT_EQ(e.code(), hoopInvalidUsage);
  EXPECT_TRUE(contains(e,
                       "expected 2097152 bytes from rank 1 (test child) in allgather #1 but "
                       "got 1048576"))
      << e.what();
}

// The child plays a broken peer: it writes `corrupt` over a slot header and publishes it.
Error garbage(std::function<void(ShmSlotHeader&)> corrupt) {
  ShmOptions options;
  options.slotBytes = 4096;
  auto pair =
      connectPair(options, options, [=](ShmConnection& connection, SocketSetupChannel& channel) {
        const ShmLayout& layout = connection.layout();
        ShmSlotHeader header{};
        header.magic = ShmSlotHeader::kMagic;
        header.version = ShmSlotHeader::kVersion;
        header.kind = static_cast<uint8_t>(OpKind::kAllReduce);
        header.seq = 3;
        header.messageBytes = 100;
        header.fragmentBytes = 100;
        corrupt(header);
        std::memcpy(layout.header(connection.side(), 0), &header, sizeof(header));
        layout.side(connection.side()).published.value.store(1, std::memory_order_release);
        channel.recvU64();
      });
  std::vector<uint8_t> buffer(100);
  Error error = expectError([&] {
    pair.connection->postRecv(buffer.data(), buffer.size(), {OpKind::kAllReduce, 3});
    driveUntilIdle(*pair.connection, 5s);
  });
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
  return error;
}

TEST(ShmErrors, GarbageHeaderIsRemoteError) {
  Error e = garbage([](ShmSlotHeader& header) { std::memset(&header, 0x5a, sizeof(header)); });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e,
                       "rank 0: garbage on the shared-memory connection from rank 1 (test "
                       "child) (bad slot header: bad magic/version) during allreduce #3"))
      << e.what();
}

TEST(ShmErrors, ImpossibleFragmentIsRemoteError) {
  // Passes the magic and matches the call, but claims more bytes than a slot holds.
  Error e = garbage([](ShmSlotHeader& header) { header.fragmentBytes = 1 << 20; });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e, "fragment of 1048576 bytes where 100 were due")) << e.what();
}

TEST(ShmErrors, FragmentOutsideItsSlotIsRemoteError) {
  // The right size, but placed so that it would run past the slot's end (or off the line grid).
  Error past = garbage([](ShmSlotHeader& header) { header.dataOffset = 4096 - 64; });
  EXPECT_EQ(past.code(), hoopRemoteError);
  EXPECT_TRUE(contains(past, "fragment of 100 bytes at offset 4032 of a 4096-byte slot"))
      << past.what();
  Error unaligned = garbage([](ShmSlotHeader& header) { header.dataOffset = 8; });
  EXPECT_TRUE(contains(unaligned, "at offset 8 of")) << unaligned.what();
  Error huge = garbage([](ShmSlotHeader& header) { header.dataOffset = ~uint64_t{0} - 63; });
  EXPECT_TRUE(contains(huge, "bad slot header: fragment of 100 bytes at offset")) << huge.what();
}

TEST(ShmErrors, StaleSlotIsRemoteError) {
  Error e = garbage([](ShmSlotHeader& header) { header.position = 8; });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e, "slot of position 8 at position 0")) << e.what();
}

TEST(ShmErrors, UnagreedCmaDescriptorIsRemoteError) {
  // Slots-only connection, yet the slot claims the bytes are to be read from the sender.
  Error e = garbage([](ShmSlotHeader& header) {
    header.flags = ShmSlotHeader::kViaCma;
    header.messageBytes = 100;
    header.fragmentBytes = 0;
  });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e, "bad slot header")) << e.what();
}

struct DeathCase {
  const char* name;
  bool useCma;
};
void PrintTo(const DeathCase& c, std::ostream* out) { *out << c.name; }
class ShmPeerDeath : public ::testing::TestWithParam<DeathCase> {};

// The creator (rank 0, the child here) is SIGKILLed in the middle of a 16 MiB send (more than
// the ring holds; by CMA, before or while the survivor reads it) while the survivor expects a
// second message too. The survivor names it within a second, and nothing is left in /dev/shm.
TEST_P(ShmPeerDeath, KilledPeerIsRemoteErrorWithinASecond) {
  ShmOptions options;
  options.useCma = GetParam().useCma;
  options.cmaThresholdBytes = kTestCmaThreshold;
  constexpr size_t kBytes = 16 << 20;
  auto pair = connectPair(
      options, options,
      [&](ShmConnection& connection, SocketSetupChannel&) {
        std::vector<uint8_t> data = pattern(1, 0, kBytes);
        connection.postSend(data.data(), kBytes, {OpKind::kAllReduce, 0});
        connection.progress();  // fills the ring (slots) or publishes the descriptor (CMA)
        raise(SIGKILL);
      },
      /*parentRank=*/1, /*childRank=*/0);
  ShmConnection& connection = *pair.connection;
  std::vector<uint8_t> first(kBytes);
  std::vector<uint8_t> second(kBytes);
  connection.postRecv(first.data(), kBytes, {OpKind::kAllReduce, 0});
  connection.postRecv(second.data(), kBytes, {OpKind::kAllReduce, 1});
  auto lastMoved = std::chrono::steady_clock::now();
  Error e = expectError([&] {
    auto deadline = lastMoved + 10s;
    while (!connection.idle() && std::chrono::steady_clock::now() < deadline) {
      if (connection.progress()) lastMoved = std::chrono::steady_clock::now();
    }
  });
  auto noticed = std::chrono::steady_clock::now() - lastMoved;
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e, "rank 1: rank 0 (test child) exited while rank 1 was")) << e.what();
  EXPECT_LT(noticed, 1s);
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 128 + SIGKILL) << child.report;
  // A segment of a concurrent setup elsewhere lives for microseconds; ours must be gone for good.
  std::vector<std::string> left;
  for (int attempt = 0; attempt < 20; ++attempt) {
    left = hoopSegmentsInDevShm();
    if (left.empty()) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(left.empty()) << "left in /dev/shm: " << left.front();
}

INSTANTIATE_TEST_SUITE_P(Paths, ShmPeerDeath,
                         ::testing::Values(DeathCase{"Cma", true}, DeathCase{"SlotsOnly", false}),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(ShmErrors, ClosedPeerIsRemoteError) {
  ShmOptions options;
  ForkedChild child([&](SocketSetupChannel& channel) {
    auto connection = connectShm(1, 0, describeRank(0, false), channel, options);
    connection.reset();  // e.g. its communicator failed and was destroyed: the process lives on
    channel.recvU64();
  });
  auto connection = connectShm(0, 1, describeRank(1, true), child.channel(), options);
  std::vector<uint8_t> buffer(10);
  connection->postRecv(buffer.data(), buffer.size(), {OpKind::kBarrier, 2});
  Error e = expectError([&] { driveUntilIdle(*connection, 5s); });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_TRUE(contains(e,
                       "rank 1 (test child) closed its shared-memory connection while rank 0 "
                       "was waiting for barrier #2 data from it"))
      << e.what();
  child.channel().sendU64(1);
  ChildResult result = child.join();
  EXPECT_EQ(result.status, 0) << result.report;
}

class PeerProcessWatch : public ::testing::TestWithParam<bool> {};

// A killed peer is "exited" even while it is an unreaped zombie (siblings under a launcher that
// has not waited yet), with a pidfd and with the kill(pid, 0) + /proc fallback.
TEST_P(PeerProcessWatch, SeesAZombieAsExited) {
  ForkedChild child([](SocketSetupChannel& channel) { channel.recvU64(); });
  PeerProcess peer(child.pid(), /*usePidfd=*/GetParam());
  EXPECT_TRUE(peer.known());
  EXPECT_FALSE(peer.exited());
  kill(child.pid(), SIGKILL);
  auto deadline = std::chrono::steady_clock::now() + 1s;
  while (!peer.exited() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(peer.exited()) << "a killed, unreaped child still looks alive";
  EXPECT_EQ(child.join().status, 128 + SIGKILL);
  EXPECT_TRUE(peer.exited());
  EXPECT_FALSE(PeerProcess().exited()) << "an unknown process never reports an exit";
}

INSTANTIATE_TEST_SUITE_P(Ways, PeerProcessWatch, ::testing::Values(true, false),
                         [](const auto& test) {
                           return std::string(test.param ? "Pidfd" : "Kill");
                         });

}  // namespace
}  // namespace hoop::test
