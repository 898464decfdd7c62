// Data path of the shared-memory transport: every size class arrives exactly, in both
// directions at once, through slots and through CMA, with many messages in flight.
#include <gtest/gtest.h>
#include <unistd.h>

#include "shm_test_util.h"

namespace hoop::test {
namespace {

constexpr size_t kSlot = 512 << 10;  // the default slot size

// Posts every send and every receive at once (both directions), drives both ends until idle and
// checks every byte. Runs the same on both sides; direction 0 is parent -> child.
std::string exchange(ShmConnection& connection, int sendDirection,
                     const std::vector<size_t>& sizes) {
  std::vector<std::vector<uint8_t>> out;
  std::vector<std::vector<uint8_t>> in;
  for (size_t m = 0; m < sizes.size(); ++m) {
    out.push_back(pattern(sendDirection, m, sizes[m]));
    in.emplace_back(sizes[m], 0xee);
  }
  for (size_t m = 0; m < sizes.size(); ++m) {
    FrameTag tag{OpKind::kAllReduce, static_cast<uint32_t>(m)};
    uint64_t sendTicket = connection.postSend(out[m].data(), sizes[m], tag);
    uint64_t recvTicket = connection.postRecv(in[m].data(), sizes[m], tag);
    if (sendTicket != m || recvTicket != m) return "tickets do not count from 0 in order";
  }
  // Completion is in ticket order: the counts never skip a message.
  driveUntilIdle(connection);
  for (size_t m = 0; m < sizes.size(); ++m) {
    std::string difference = firstDifference(in[m], pattern(1 - sendDirection, m, sizes[m]));
    if (!difference.empty()) {
      return "message " + std::to_string(m) + " (" + std::to_string(sizes[m]) +
             " bytes): " + difference;
    }
  }
  return "";
}

size_t countAtLeast(const std::vector<size_t>& sizes, size_t threshold) {
  size_t count = 0;
  for (size_t size : sizes) count += size >= threshold ? 1 : 0;
  return count;
}

struct PathCase {
  const char* name;
  bool useCma;
};
void PrintTo(const PathCase& c, std::ostream* out) { *out << c.name; }

class ShmSizes : public ::testing::TestWithParam<PathCase> {};

TEST_P(ShmSizes, EverySizeArrivesExactlyInBothDirectionsAtOnce) {
  ShmOptions options;
  options.useCma = GetParam().useCma;
  options.cmaThresholdBytes = kTestCmaThreshold;
  const std::vector<size_t> sizes = {0, 1, kSlot - 1, kSlot, kSlot + 1, kSlot * 7 / 2, 4u << 20};
  auto pair =
      connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel& channel) {
        std::string error = exchange(connection, 1, sizes);
        require(error.empty(), error);
        channel.sendU64(connection.sendsViaCma());
        channel.sendU64(connection.cmaRecvsCompleted());
        channel.sendU64(mayReadProcess(getppid()));
      });
  ShmConnection& connection = *pair.connection;
  bool parentMayReadChild = mayReadProcess(pair.child->pid());  // while it surely runs
  EXPECT_EQ(exchange(connection, 0, sizes), "");
  bool childSendsViaCma = pair.channel().recvU64() != 0;
  uint64_t childCmaRecvs = pair.channel().recvU64();
  bool childMayReadParent = pair.channel().recvU64() != 0;
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;

  // Each direction uses CMA exactly when it was wanted and the kernel allows the receiver to
  // read the sender; both ends agree; and the agreed path is the one taken.
  bool useCma = GetParam().useCma;
  EXPECT_EQ(connection.recvsViaCma(), useCma && parentMayReadChild);
  EXPECT_EQ(connection.sendsViaCma(), useCma && childMayReadParent);
  EXPECT_EQ(childSendsViaCma, connection.recvsViaCma());
  size_t large = countAtLeast(sizes, options.cmaThresholdBytes);
  EXPECT_EQ(connection.cmaRecvsCompleted(), connection.recvsViaCma() ? large : 0);
  EXPECT_EQ(childCmaRecvs, connection.sendsViaCma() ? large : 0);
  EXPECT_EQ(connection.cmaSendsCompleted(), connection.sendsViaCma() ? large : 0);
  if (useCma && !(parentMayReadChild && childMayReadParent)) {
    std::cout << "note: this host refuses process_vm_readv parent->child: " << !parentMayReadChild
              << ", child->parent: " << !childMayReadParent << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, ShmSizes,
                         ::testing::Values(PathCase{"Cma", true}, PathCase{"SlotsOnly", false}),
                         [](const auto& test) { return std::string(test.param.name); });

class ShmManyInFlight : public ::testing::TestWithParam<PathCase> {};

// Small slots wrap the rings many times; with CMA on, descriptor slots and data slots interleave
// in one stream, and completion must still come in ticket order.
TEST_P(ShmManyInFlight, HundredsOfMessagesArriveInOrder) {
  ShmOptions options;
  options.slots = 4;
  options.slotBytes = 4096;
  options.useCma = GetParam().useCma;
  options.cmaThresholdBytes = 6000;
  std::vector<size_t> sizes;
  for (size_t m = 0; m < 256; ++m) sizes.push_back((m * 977) % (4096 * 7 / 2 + 1));
  auto pair = connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel&) {
    std::string error = exchange(connection, 1, sizes);
    require(error.empty(), error);
  });
  bool parentMayReadChild = mayReadProcess(pair.child->pid());  // it waits for our messages
  EXPECT_EQ(pair.connection->maxInFlight(), sizes.size());
  EXPECT_EQ(exchange(*pair.connection, 0, sizes), "");
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
  if (GetParam().useCma && parentMayReadChild) {
    EXPECT_GT(pair.connection->cmaRecvsCompleted(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, ShmManyInFlight,
                         ::testing::Values(PathCase{"MixedCma", true},
                                           PathCase{"SlotsOnly", false}),
                         [](const auto& test) { return std::string(test.param.name); });

// A CMA send lends its buffer to the receiver: it must not complete (and the caller must not
// reuse the buffer) before the receiver has read it and released the descriptor slot.
TEST(ShmCma, SendCompletesOnlyAfterTheReceiverRead) {
  ShmOptions options;
  options.cmaThresholdBytes = kTestCmaThreshold;
  auto pair =
      connectPair(options, options, [](ShmConnection& connection, SocketSetupChannel& channel) {
        std::vector<uint8_t> data = pattern(1, 0, 1 << 20);
        connection.postSend(data.data(), data.size(), {OpKind::kBroadcast, 0});
        auto until = std::chrono::steady_clock::now() + 30ms;
        while (std::chrono::steady_clock::now() < until) connection.progress();
        require(connection.sendsCompleted() == 0, "CMA send completed before the receiver read it");
        channel.sendU64(1);
        driveUntilIdle(connection);
        std::fill(data.begin(), data.end(), 0);  // the buffer is ours again
        channel.recvU64();
      });
  ShmConnection& connection = *pair.connection;
  if (!mayReadProcess(pair.child->pid())) GTEST_SKIP() << "process_vm_readv refused here";
  ASSERT_TRUE(connection.recvsViaCma());
  pair.channel().recvU64();  // the child saw its send stay incomplete
  std::vector<uint8_t> in(1 << 20);
  connection.postRecv(in.data(), in.size(), {OpKind::kBroadcast, 0});
  driveUntilIdle(connection);
  EXPECT_EQ(firstDifference(in, pattern(1, 0, 1 << 20)), "");
  EXPECT_EQ(connection.cmaRecvsCompleted(), 1u);
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

// Yama's ptrace_scope=1 and mixed users make CMA one-way. Here the peer runs as "nobody": it may
// not read root's memory, root may read it. Each direction must take its own path.
TEST(ShmCma, OneWayWhenOnlyOneSideMayRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to run the peer as another user";
  ShmOptions options;
  options.cmaThresholdBytes = kTestCmaThreshold;
  const std::vector<size_t> sizes = {1, kSlot + 1, 4u << 20};
  // The child creates the segment (rank 0), so it owns it; root may open it anyway.
  ForkedChild child([&](SocketSetupChannel& channel) {
    require(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0,
            "cannot become nobody");
    auto connection = connectShm(0, 1, describeRank(1, false), channel, options);
    require(!connection->recvsViaCma(), "nobody may not read root, yet agreed to receive by CMA");
    require(connection->sendsViaCma(), "root may read nobody, yet no CMA towards it");
    std::string error = exchange(*connection, 1, sizes);
    require(error.empty(), error);
    channel.sendU64(connection->cmaRecvsCompleted());
  });
  auto connection = connectShm(1, 0, describeRank(0, true), child.channel(), options);
  EXPECT_TRUE(connection->recvsViaCma());
  EXPECT_FALSE(connection->sendsViaCma());
  EXPECT_EQ(exchange(*connection, 0, sizes), "");
  EXPECT_EQ(connection->cmaRecvsCompleted(), 2u);
  EXPECT_EQ(child.channel().recvU64(), 0u);
  ChildResult result = child.join();
  ASSERT_EQ(result.status, 0) << result.report;
}

TEST(ShmPeek, ReadsMessagesInPlaceAndReleasesSlots) {
  ShmOptions options;
  options.slots = 2;  // the sender needs our releases to get past the second message
  options.slotBytes = 4096;
  options.useCma = false;
  const std::vector<size_t> sizes = {1000, 4096, 0, 64, 3000, 17};
  auto pair =
      connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel& channel) {
        channel.recvU64();  // the parent has seen nothing arrive yet
        std::vector<std::vector<uint8_t>> out;
        for (size_t m = 0; m < sizes.size(); ++m) out.push_back(pattern(1, m, sizes[m]));
        for (size_t m = 0; m < sizes.size(); ++m) {
          connection.postSend(out[m].data(), sizes[m], {OpKind::kReduce, static_cast<uint32_t>(m)});
        }
        std::vector<uint8_t> last = pattern(1, 99, 5000);  // two slots: not peekable
        connection.postSend(last.data(), last.size(), {OpKind::kReduce, 99});
        driveUntilIdle(connection);
      });
  ShmConnection& connection = *pair.connection;
  // Schedules reach the zero-copy paths through the Connection interface, not the class.
  Connection& generic = connection;
  EXPECT_EQ(generic.inPlaceReceive(), static_cast<InPlaceReceive*>(&connection));
  EXPECT_EQ(generic.directSend(), static_cast<DirectSend*>(&connection));
  EXPECT_EQ(generic.eagerMessages(), static_cast<EagerMessages*>(&connection));
  EXPECT_TRUE(connection.canPeek(4096));
  EXPECT_FALSE(connection.canPeek(4097));

  FrameTag first{OpKind::kReduce, 0};
  EXPECT_EQ(connection.peekRecv(sizes[0], first), nullptr);  // nothing sent yet
  pair.channel().sendU64(1);
  for (size_t m = 0; m < sizes.size(); ++m) {
    FrameTag tag{OpKind::kReduce, static_cast<uint32_t>(m)};
    const void* data = nullptr;
    driveUntil(connection, [&] { return (data = connection.peekRecv(sizes[m], tag)) != nullptr; });
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
    EXPECT_EQ(connection.peekRecv(sizes[m], tag), data) << "a second peek returns the same view";
    const auto* bytes = static_cast<const uint8_t*>(data);
    EXPECT_EQ(firstDifference({bytes, bytes + sizes[m]}, pattern(1, m, sizes[m])), "")
        << "message " << m;
    connection.releasePeeked();
    EXPECT_EQ(connection.recvsPosted(), m + 1);
    EXPECT_EQ(connection.recvsCompleted(), m + 1);
  }
  // After peeks, an ordinary receive takes the next message (tickets continue).
  std::vector<uint8_t> last(5000);
  EXPECT_EQ(connection.postRecv(last.data(), last.size(), {OpKind::kReduce, 99}), sizes.size());
  driveUntilIdle(connection);
  EXPECT_EQ(firstDifference(last, pattern(1, 99, 5000)), "");
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

TEST(ShmInPlaceSend, WritesIntoTheNextSlotInOrderWithPostedSends) {
  ShmOptions options;
  options.slots = 2;
  options.slotBytes = 4096;
  options.useCma = false;
  // Messages 0 and 3 are posted, 1, 2 and 4 written in place; the child receives all five in
  // order, 1 and 4 by peek and the others by postRecv, and checks every byte.
  const std::vector<size_t> sizes = {3000, 100, 0, 5000, 4096};
  auto pair =
      connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel& channel) {
        channel.recvU64();  // both slots are full: the parent has checked it cannot write more
        for (size_t m = 0; m < sizes.size(); ++m) {
          FrameTag tag{OpKind::kReduceScatter, static_cast<uint32_t>(m)};
          std::vector<uint8_t> got(sizes[m]);
          if (m == 1 || m == 4) {
            const void* data = nullptr;
            driveUntil(connection,
                       [&] { return (data = connection.peekRecv(sizes[m], tag)) != nullptr; });
            std::memcpy(got.data(), data, sizes[m]);
            connection.releasePeeked();
          } else {
            connection.postRecv(got.data(), sizes[m], tag);
            driveUntilIdle(connection);
          }
          std::string difference = firstDifference(got, pattern(0, m, sizes[m]));
          if (!difference.empty()) fail(hoopInternalError, "message ", m, ": ", difference);
        }
      });
  ShmConnection& connection = *pair.connection;
  auto tag = [](size_t m) { return FrameTag{OpKind::kReduceScatter, static_cast<uint32_t>(m)}; };
  auto writeInPlace = [&](size_t m) {
    void* slot = connection.sendSlot(sizes[m]);
    ASSERT_NE(slot, nullptr) << "message " << m;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % 64, 0u);
    std::vector<uint8_t> bytes = pattern(0, m, sizes[m]);
    if (!bytes.empty()) std::memcpy(slot, bytes.data(), bytes.size());
    EXPECT_EQ(connection.publishSend(sizes[m], tag(m)), m) << "tickets go on from posted sends";
    EXPECT_EQ(connection.sendsCompleted(), m + 1) << "complete as soon as published";
  };

  EXPECT_EQ(connection.sendSlot(4097), nullptr) << "larger than a slot";
  std::vector<uint8_t> first = pattern(0, 0, sizes[0]);
  connection.postSend(first.data(), first.size(), tag(0));
  EXPECT_EQ(connection.sendSlot(100), nullptr) << "a posted send is still queued ahead";
  connection.progress();
  writeInPlace(1);
  EXPECT_EQ(connection.sendSlot(0), nullptr) << "both slots hold unread messages";
  try {
    connection.publishSend(0, tag(2));
    ADD_FAILURE() << "publishSend without a free slot must refuse";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInternalError);
    EXPECT_NE(std::string(e.what()).find("sendSlot"), std::string::npos) << e.what();
  }
  pair.channel().sendU64(1);
  driveUntil(connection, [&] { return connection.sendSlot(0) != nullptr; });
  writeInPlace(2);
  std::vector<uint8_t> fourth = pattern(0, 3, sizes[3]);  // two slots' worth: posted
  connection.postSend(fourth.data(), fourth.size(), tag(3));
  driveUntil(connection, [&] { return connection.sendSlot(sizes[4]) != nullptr; });
  writeInPlace(4);
  driveUntilIdle(connection);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

// Where each message of `sizes` starts in its slot's data area, through 2 slots of 4 KiB with
// ShmOptions::spreadBytes = `spread`. Even messages are posted and peeked at, odd ones written in
// place and received by postRecv: the receiver (a child process) checks every byte and where each
// peeked message lies, the sender every in-place pointer.
void expectPlacement(size_t spread, const std::vector<size_t>& sizes,
                     const std::vector<size_t>& offsets) {
  ShmOptions options;
  options.slots = 2;
  options.slotBytes = 4096;
  options.useCma = false;
  options.spreadBytes = spread;
  auto tag = [](size_t m) { return FrameTag{OpKind::kAllGather, static_cast<uint32_t>(m)}; };
  auto pair = connectPair(options, options, [&](ShmConnection& connection, SocketSetupChannel&) {
    const ShmLayout& layout = connection.layout();
    for (size_t m = 0; m < sizes.size(); ++m) {
      std::vector<uint8_t> got(sizes[m]);
      if (m % 2 == 0 && connection.canPeek(sizes[m])) {
        const uint8_t* data = nullptr;
        driveUntil(connection, [&] {
          data = static_cast<const uint8_t*>(connection.peekRecv(sizes[m], tag(m)));
          return data != nullptr;
        });
        const auto offset = static_cast<size_t>(data - layout.data(1 - connection.side(), m));
        if (offset != offsets[m]) {
          fail(hoopInternalError, "message ", m, " at offset ", offset, ", not ", offsets[m]);
        }
        std::memcpy(got.data(), data, sizes[m]);
        connection.releasePeeked();
      } else {
        connection.postRecv(got.data(), sizes[m], tag(m));
        driveUntilIdle(connection);
      }
      std::string difference = firstDifference(got, pattern(0, m, sizes[m]));
      if (!difference.empty()) fail(hoopInternalError, "message ", m, ": ", difference);
    }
  });
  ShmConnection& connection = *pair.connection;
  const ShmLayout& layout = connection.layout();
  std::vector<std::vector<uint8_t>> messages;
  for (size_t m = 0; m < sizes.size(); ++m) messages.push_back(pattern(0, m, sizes[m]));
  size_t position = 0;  // slots published so far
  for (size_t m = 0; m < sizes.size(); ++m) {
    if (m % 2 == 0 || sizes[m] > options.slotBytes) {
      connection.postSend(messages[m].data(), sizes[m], tag(m));
      driveUntilIdle(connection);
      position += std::max<size_t>(1, (sizes[m] + options.slotBytes - 1) / options.slotBytes);
      continue;
    }
    uint8_t* slot = nullptr;
    driveUntil(connection,
               [&] { return (slot = static_cast<uint8_t*>(connection.sendSlot(sizes[m]))); });
    EXPECT_EQ(static_cast<size_t>(slot - layout.data(connection.side(), position)), offsets[m])
        << "message " << m;
    std::memcpy(slot, messages[m].data(), sizes[m]);
    connection.publishSend(sizes[m], tag(m));
    ++position;
  }
  driveUntilIdle(connection);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

TEST(ShmSpread, EachSlotFillsOnFromItsLastMessageThenWraps) {
  // Slot 0 takes messages 0, 2, 4, 6; slot 1 takes 1, 3, 5, 7. Sizes round up to 64 bytes.
  const std::vector<size_t> sizes = {1000, 1000, 1000, 1000, 2000, 3000, 100, 1000};
  //                       slot 0:   0           1024        2048        0 (2048 + 2000 ended it)
  //                       slot 1:         0           1024        0 (2048 + 3000 > 4096) 3008
  expectPlacement(4096, sizes, {0, 0, 1024, 1024, 2048, 0, 0, 3008});
}

TEST(ShmSpread, TheSpreadBoundsHowFarAMessageStarts) {
  // Within the first 2 KiB: 1000-byte messages alternate between 0 and 1024 in each slot.
  expectPlacement(2048, {1000, 1000, 1000, 1000, 1000, 1000}, {0, 0, 1024, 1024, 0, 0});
}

TEST(ShmSpread, NoSpreadPutsEveryMessageAtItsSlotsStart) {
  expectPlacement(0, {1000, 1000, 1000, 1000, 64, 64}, {0, 0, 0, 0, 0, 0});
}

TEST(ShmPeek, MessagesSentByCmaAreNotPeekable) {
  ShmOptions options;  // 512 KiB slots
  options.cmaThresholdBytes = kTestCmaThreshold;
  auto pair = connectPair(options, options,
                          [](ShmConnection&, SocketSetupChannel& channel) { channel.recvU64(); });
  ShmConnection& connection = *pair.connection;
  if (!mayReadProcess(pair.child->pid())) GTEST_SKIP() << "process_vm_readv refused here";
  ASSERT_TRUE(connection.recvsViaCma());
  EXPECT_TRUE(connection.canPeek(options.cmaThresholdBytes - 1));
  EXPECT_FALSE(connection.canPeek(options.cmaThresholdBytes));
  try {
    connection.peekRecv(options.cmaThresholdBytes, {OpKind::kAllReduce, 0});
    ADD_FAILURE() << "peekRecv of a message that travels by CMA must refuse";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInternalError);
    EXPECT_NE(std::string(e.what()).find("canPeek"), std::string::npos) << e.what();
  }
  pair.channel().sendU64(1);
  ChildResult child = pair.child->join();
  ASSERT_EQ(child.status, 0) << child.report;
}

}  // namespace
}  // namespace hoop::test
