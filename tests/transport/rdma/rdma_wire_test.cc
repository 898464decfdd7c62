// The setup message two ranks trade to connect their queue pairs, and the RDMA summary each
// rank brings to the rendezvous: what is written reads back, and anything malformed is a
// hoopRemoteError, never a wild read.
#include <gtest/gtest.h>

#include "base/error.h"
#include "transport/rdma/rdma_reach.h"
#include "transport/rdma/rdma_setup_wire.h"

namespace hoop {
namespace {

RdmaSetupMessage sample() {
  RdmaSetupMessage m;
  m.jobTag = 0x0123456789abcdef;
  m.fromRank = 2;
  m.toRank = 5;
  m.slots = 8;
  m.slotBytes = 512 << 10;
  RdmaRailInfo rail;
  for (size_t i = 0; i < rail.gid.size(); ++i) rail.gid[i] = static_cast<uint8_t>(i * 7);
  rail.lid = 0x1234;
  rail.port = 1;
  rail.mtu = 3;
  rail.linkLayer = LinkLayer::kEthernet;
  rail.gidIndex = 3;
  rail.memoryAddress = 0x7f0012340000;
  rail.memoryKey = 0xabcdef01;
  m.rails = {rail, rail};
  m.rails[1].port = 2;
  m.queuePairs = {{0, 0x123456, 0xabcdef}, {1, 17, 0}, {0, 0xffffff, 1}};
  return m;
}

TEST(RdmaSetupWire, RoundTrips) {
  const RdmaSetupMessage m = sample();
  const std::vector<uint8_t> bytes = encodeRdmaSetup(m);
  const RdmaSetupMessage back = decodeRdmaSetup(bytes.data(), bytes.size());
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.jobTag, m.jobTag);
  EXPECT_EQ(back.fromRank, 2u);
  EXPECT_EQ(back.toRank, 5u);
  EXPECT_EQ(back.slots, 8u);
  EXPECT_EQ(back.slotBytes, m.slotBytes);
  ASSERT_EQ(back.rails.size(), 2u);
  EXPECT_EQ(back.rails[0].gid, m.rails[0].gid);
  EXPECT_EQ(back.rails[0].lid, 0x1234);
  EXPECT_EQ(back.rails[1].port, 2);
  EXPECT_EQ(back.rails[0].mtu, 3);
  EXPECT_EQ(back.rails[0].linkLayer, LinkLayer::kEthernet);
  EXPECT_EQ(back.rails[0].memoryAddress, m.rails[0].memoryAddress);
  EXPECT_EQ(back.rails[0].memoryKey, m.rails[0].memoryKey);
  ASSERT_EQ(back.queuePairs.size(), 3u);
  EXPECT_EQ(back.queuePairs[0].number, 0x123456u);
  EXPECT_EQ(back.queuePairs[0].psn, 0xabcdefu);
  EXPECT_EQ(back.queuePairs[1].rail, 1);
}

TEST(RdmaSetupWire, FailureCarriesItsText) {
  RdmaSetupMessage failure;
  failure.ok = false;
  failure.error = "no active port";
  const std::vector<uint8_t> bytes = encodeRdmaSetup(failure);
  const RdmaSetupMessage back = decodeRdmaSetup(bytes.data(), bytes.size());
  EXPECT_FALSE(back.ok);
  EXPECT_EQ(back.error, "no active port");
}

void expectRejected(const std::vector<uint8_t>& bytes, const std::string& expected) {
  try {
    decodeRdmaSetup(bytes.data(), bytes.size());
    ADD_FAILURE() << "accepted; expected: " << expected;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopRemoteError);
    EXPECT_NE(std::string(error.what()).find(expected), std::string::npos) << error.what();
  }
}

TEST(RdmaSetupWire, EveryTruncationIsAnError) {
  const std::vector<uint8_t> bytes = encodeRdmaSetup(sample());
  for (size_t length = 0; length < bytes.size(); ++length) {
    expectRejected(std::vector<uint8_t>(bytes.begin(), bytes.begin() + length), "malformed");
  }
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  expectRejected(longer, "trailing");
}

TEST(RdmaSetupWire, OutOfRangeFieldsAreRefused) {
  auto with = [](auto change) {
    RdmaSetupMessage m = sample();
    change(m);
    return encodeRdmaSetup(m);
  };
  expectRejected(with([](RdmaSetupMessage& m) { m.slots = 0; }), "0 slots");
  expectRejected(with([](RdmaSetupMessage& m) { m.slots = 5000; }), "5000 slots");
  expectRejected(with([](RdmaSetupMessage& m) { m.slotBytes = 100; }), "slots of 100 bytes");
  expectRejected(with([](RdmaSetupMessage& m) { m.rails.clear(); }), "0 rails");
  expectRejected(with([](RdmaSetupMessage& m) { m.queuePairs.clear(); }), "0 queue pairs");
  expectRejected(with([](RdmaSetupMessage& m) { m.queuePairs[0].rail = 2; }), "rail 2");
  expectRejected(with([](RdmaSetupMessage& m) { m.queuePairs[1].number = 1u << 24; }), "24 bits");
  expectRejected(with([](RdmaSetupMessage& m) { m.rails[0].mtu = 9; }), "MTU code 9");
  expectRejected(with([](RdmaSetupMessage& m) { m.rails[0].port = 0; }), "port 0");
  expectRejected(with([](RdmaSetupMessage& m) { m.rails[1].memoryAddress = 0; }), "address 0");
  std::vector<uint8_t> wrongMagic = encodeRdmaSetup(sample());
  wrongMagic[0] ^= 1;
  expectRejected(wrongMagic, "not an rdma setup message");
  std::vector<uint8_t> oddStatus = encodeRdmaSetup(sample());
  oddStatus[5] = 0x81;  // neither 0 nor 1: a message must read back as it was written
  expectRejected(oddStatus, "status byte 129");
  std::vector<uint8_t> wrongVersion = encodeRdmaSetup(sample());
  wrongVersion[4] = 9;
  expectRejected(wrongVersion, "version 9");
}

TEST(RdmaReachWire, RoundTripsInAFixedSize) {
  RdmaReach reach;
  reach.state = RdmaState::kUsable;
  reach.linkLayer = LinkLayer::kInfiniBand;
  reach.gidType = GidType::kInfiniBand;
  reach.port = 2;
  reach.subnetPrefix = 0xfe80000000000001;
  reach.device = "mlx5_0";
  WireWriter out;
  writeRdmaReach(out, reach);
  EXPECT_EQ(out.bytes().size(), 32u);
  WireWriter empty;
  writeRdmaReach(empty, RdmaReach{});
  EXPECT_EQ(empty.bytes().size(), 32u);
  WireReader in(out.bytes().data(), out.bytes().size(), "test");
  const RdmaReach back = readRdmaReach(in);
  EXPECT_EQ(back.state, RdmaState::kUsable);
  EXPECT_EQ(back.linkLayer, LinkLayer::kInfiniBand);
  EXPECT_EQ(back.gidType, GidType::kInfiniBand);
  EXPECT_EQ(back.port, 2);
  EXPECT_EQ(back.subnetPrefix, reach.subnetPrefix);
  EXPECT_EQ(back.device, "mlx5_0");
  std::vector<uint8_t> bad = out.bytes();
  bad[0] = 77;
  WireReader badIn(bad.data(), bad.size(), "test");
  EXPECT_THROW(readRdmaReach(badIn), Error);
}

}  // namespace
}  // namespace hoop
