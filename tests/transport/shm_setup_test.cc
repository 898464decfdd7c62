// Setting up a shared-memory connection: the segment is private and its name gone once both
// sides have it mapped; a full /dev/shm or bad options fail fast on both sides.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/config.h"
#include "shm_test_util.h"
#include "transport/shm/shm_segment.h"

namespace hoop::test {
namespace {

bool existsInDevShm(const std::string& name) {
  struct stat info {};
  return stat(("/dev/shm" + name).c_str(), &info) == 0;
}

TEST(ShmSegment, IsPrivateUnguessableAndRemovedWhenDropped) {
  std::string name;
  {
    ShmSegment segment = ShmSegment::create(1 << 20, "/dev/shm", 1 << 20);
    name = segment.name();
    ASSERT_EQ(name.size(), std::string("/hoop-").size() + 32) << name;
    EXPECT_EQ(name.find_first_not_of("0123456789abcdef", 6), std::string::npos) << name;
    struct stat info {};
    ASSERT_EQ(stat(("/dev/shm" + name).c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 0777, 0600u);
    EXPECT_EQ(info.st_size, 1 << 20);
    EXPECT_NE(ShmSegment::create(4096, "/dev/shm", 4096).name(), name);
  }
  // Created but never handed to a peer (setup failed half-way): the name must not stay behind.
  EXPECT_FALSE(existsInDevShm(name));
}

// Kibibytes of the mapping that starts at `address` that are in this process's page tables
// (its "Rss" in /proc/self/smaps), or -1 when no mapping starts there.
long residentKiB(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto start = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    const size_t dash = line.find('-');
    if (dash != std::string::npos && dash > 0 &&
        line.find_first_not_of("0123456789abcdef") == dash) {
      inside = std::stoull(line.substr(0, dash), nullptr, 16) == start;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return -1;
}

// Both sides map the segment with its pages in place: a first touch inside a collective would
// cost a page fault there (for hundreds of calls, with spread messages).
TEST(ShmSegment, BothSidesMapEveryPageUpFront) {
  constexpr size_t kBytes = 4 << 20;
  ShmSegment created = ShmSegment::create(kBytes, "/dev/shm", kBytes);
  ShmSegment opened = ShmSegment::open(created.name(), kBytes);
  EXPECT_EQ(residentKiB(created.data()), long{kBytes >> 10});
  EXPECT_EQ(residentKiB(opened.data()), long{kBytes >> 10});
}

TEST(ShmSetup, SegmentNameIsGoneRightAfterSetupAndGeometryIsTheCreators) {
  ShmOptions creator;
  creator.slots = 4;
  creator.slotBytes = 1000;  // rounded up to a multiple of 64
  ShmOptions joiner;         // defaults: the creator's choice wins
  auto pair =
      connectPair(creator, joiner, [](ShmConnection& connection, SocketSetupChannel& channel) {
        require(!connection.segmentName().empty(), "no segment name");
        require(!existsInDevShm(connection.segmentName()), "name still in /dev/shm for the joiner");
        channel.sendU64(connection.layout().slots());
        channel.sendU64(connection.slotBytes());
      });
  ShmConnection& connection = *pair.connection;
  EXPECT_EQ(connection.segmentName().rfind("/hoop-", 0), 0u) << connection.segmentName();
  EXPECT_FALSE(existsInDevShm(connection.segmentName()));
  EXPECT_EQ(connection.layout().slots(), 4u);
  EXPECT_EQ(connection.slotBytes(), 1024u);
  EXPECT_EQ(pair.channel().recvU64(), 4u);
  EXPECT_EQ(pair.channel().recvU64(), 1024u);
  ChildResult child = pair.child->join();
  EXPECT_EQ(child.status, 0) << child.report;
}

// Both sides fail: the creator with the reason, the joiner with the creator's reason.
void expectSetupFailsOnBothSides(const ShmOptions& creatorOptions, hoopResult_t code,
                                 const std::vector<std::string>& texts) {
  ForkedChild child([&](SocketSetupChannel& channel) {
    try {
      connectShm(1, 0, describeRank(0, false), channel, ShmOptions{});
    } catch (const Error& e) {
      require(e.code() == hoopRemoteError, std::string("joiner's code for: ") + e.what());
      for (const std::string& text : texts) {
        require(std::string(e.what()).find(text) != std::string::npos,
                "joiner's message lacks '" + text + "': " + e.what());
      }
      return;
    }
    require(false, "the joiner's connectShm succeeded");
  });
  try {
    connectShm(0, 1, describeRank(1, true), child.channel(), creatorOptions);
    ADD_FAILURE() << "the creator's connectShm succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string& text : texts) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
    EXPECT_NE(std::string(e.what()).find("rank 0: setting up shared memory with rank 1"),
              std::string::npos)
        << e.what();
  }
  ChildResult result = child.join();
  EXPECT_EQ(result.status, 0) << result.report;
}

TEST(ShmSetup, FullDevShmFailsFastWithTheFix) {
  ShmOptions options;
  options.requiredFreeBytesForTesting = size_t{1} << 60;  // more than any /dev/shm has
  expectSetupFailsOnBothSides(
      options, hoopSystemError,
      {"needs 1152921504606846976 bytes (1099511627776 MiB) in /dev/shm", "are free",
       "docker run --shm-size", "HOOP_SHM_SLOTS, HOOP_SHM_SLOT_SIZE"});
}

TEST(ShmSetup, BadOptionsFailOnBothSides) {
  ShmOptions options;
  options.slots = 0;
  expectSetupFailsOnBothSides(options, hoopInvalidArgument, {"slots must be 1..4096, not 0"});
}

// HOOP_SHM_SPREAD: a byte size, kept as the user's (the communicator then leaves it alone).
TEST(ShmConfig, SpreadComesFromTheEnvironment) {
  unsetenv("HOOP_SHM_SPREAD");
  Config plain = Config::fromEnvironment();
  EXPECT_FALSE(plain.shm.spreadSetByUser);
  setenv("HOOP_SHM_SPREAD", "64K", 1);
  Config set = Config::fromEnvironment();
  EXPECT_TRUE(set.shm.spreadSetByUser);
  EXPECT_EQ(set.shm.spreadBytes, size_t{64} << 10);
  setenv("HOOP_SHM_SPREAD", "lots", 1);
  try {
    Config::fromEnvironment();
    ADD_FAILURE() << "HOOP_SHM_SPREAD=lots accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("HOOP_SHM_SPREAD='lots'"), std::string::npos) << e.what();
  }
  unsetenv("HOOP_SHM_SPREAD");
}

}  // namespace
}  // namespace hoop::test
