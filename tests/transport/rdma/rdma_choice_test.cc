// Whether a pair uses RDMA: from both ranks' summaries (as the rendezvous carries them), with
// the fallback to TCP explained, and HOOP_TRANSPORT=rdma forcing it or failing clearly. The
// summaries come from a fake sysfs tree, the way discovery reads a real one.
#include <gtest/gtest.h>

#include "base/error.h"
#include "scratch_dir.h"
#include "transport/rdma/rdma_device.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

RdmaReach usableRoce(const char* device = "rxe0") {
  RdmaReach reach;
  reach.state = RdmaState::kUsable;
  reach.linkLayer = LinkLayer::kEthernet;
  reach.gidType = GidType::kRoceV2;
  reach.port = 1;
  reach.device = device;
  return reach;
}

PeerPair pair(bool sameHost, RdmaReach self, RdmaReach peer) {
  return {.self = 0,
          .peer = 3,
          .sameHost = sameHost,
          .peerName = "rank 3 (host b, pid 7)",
          .selfRdma = std::move(self),
          .peerRdma = std::move(peer)};
}

std::string choose(const char* setting, const PeerPair& p, std::string* passedOver = nullptr) {
  return std::string(
      chooseTransport(TransportPolicy::parse(setting), p, TransportRegistry::global(), passedOver)
          .name());
}

TEST(RdmaChoice, AcrossHostsWithDevicesOnBothSides) {
  EXPECT_EQ(choose("", pair(false, usableRoce(), usableRoce("mlx5_0"))), "rdma");
  // Within a host shared memory wins, and rdma alone would not be chosen there.
  EXPECT_EQ(choose("", pair(true, usableRoce(), usableRoce())), "shm");
  EXPECT_EQ(choose("^shm", pair(true, usableRoce(), usableRoce())), "tcp");
}

TEST(RdmaChoice, FallsBackToTcpSayingWhy) {
  RdmaReach none;
  none.state = RdmaState::kNoDevice;
  std::string why;
  EXPECT_EQ(choose("", pair(false, usableRoce(), none), &why), "tcp");
  EXPECT_NE(why.find("rank 3 (host b, pid 7) has no RDMA device"), std::string::npos) << why;
  EXPECT_EQ(choose("", pair(false, none, usableRoce()), &why), "tcp");
  EXPECT_NE(why.find("this rank has no RDMA device"), std::string::npos) << why;

  RdmaReach down = usableRoce();
  down.state = RdmaState::kPortDown;
  EXPECT_EQ(choose("", pair(false, usableRoce(), down), &why), "tcp");
  EXPECT_NE(why.find("no active port on rxe0"), std::string::npos) << why;

  RdmaReach v1 = usableRoce();
  v1.gidType = GidType::kRoceV1;
  EXPECT_EQ(choose("", pair(false, usableRoce(), v1), &why), "tcp");
  EXPECT_NE(why.find("no common GID type (RoCE v2 here, RoCE v1 at rank 3"), std::string::npos)
      << why;

  RdmaReach ib = usableRoce("mlx5_0");
  ib.linkLayer = LinkLayer::kInfiniBand;
  ib.gidType = GidType::kInfiniBand;
  EXPECT_EQ(choose("", pair(false, usableRoce(), ib), &why), "tcp");
  EXPECT_NE(why.find("no common link layer"), std::string::npos) << why;

  RdmaReach otherSubnet = ib;
  otherSubnet.subnetPrefix = 0xfe80000000000001;
  EXPECT_EQ(choose("", pair(false, ib, otherSubnet), &why), "tcp");
  EXPECT_NE(why.find("different InfiniBand subnets"), std::string::npos) << why;
  EXPECT_EQ(choose("", pair(false, ib, ib), &why), "rdma");
  EXPECT_EQ(why, "");
}

TEST(RdmaChoice, BothRanksDecideAlike) {
  RdmaReach none;
  none.state = RdmaState::kNoLibrary;
  const RdmaReach v1 = [] {
    RdmaReach r = usableRoce();
    r.gidType = GidType::kRoceV1;
    return r;
  }();
  for (const RdmaReach& a : {usableRoce(), none, v1}) {
    for (const RdmaReach& b : {usableRoce(), none, v1}) {
      for (bool sameHost : {false, true}) {
        EXPECT_EQ(choose("rdma,tcp", pair(sameHost, a, b)),
                  choose("rdma,tcp", pair(sameHost, b, a)));
      }
    }
  }
}

TEST(RdmaChoice, NamedRdmaIsUsedWithinAHostAndFailsClearlyWithoutADevice) {
  EXPECT_EQ(choose("rdma", pair(true, usableRoce(), usableRoce())), "rdma");
  EXPECT_EQ(choose("rdma,tcp", pair(true, usableRoce(), usableRoce())), "rdma");
  RdmaReach none;
  none.state = RdmaState::kNoDevice;
  try {
    choose("rdma", pair(false, none, usableRoce()));
    ADD_FAILURE() << "rdma without a device was chosen";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    const std::string text = error.what();
    EXPECT_NE(text.find("HOOP_TRANSPORT='rdma'"), std::string::npos) << text;
    EXPECT_NE(text.find("this rank has no RDMA device"), std::string::npos) << text;
  }
}

// A fake /sys/class/infiniband with a RoCE device rxe0 (port 1) and an InfiniBand mlx5_0 (port
// 1 active, port 2 down).
struct FakeSysfs {
  test::ScratchDir dir;
  FakeSysfs() {
    dir.write("rxe0/ports/1/state", "4: ACTIVE\n");
    dir.write("rxe0/ports/1/link_layer", "Ethernet\n");
    dir.write("rxe0/ports/1/lid", "0x0\n");
    dir.write("rxe0/ports/1/gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
    dir.write("rxe0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
    dir.write("rxe0/ports/1/gids/1", "0000:0000:0000:0000:0000:ffff:0a00:020f\n");
    dir.write("rxe0/ports/1/gid_attrs/types/1", "RoCE v2\n");
    dir.write("mlx5_0/ports/1/state", "4: ACTIVE\n");
    dir.write("mlx5_0/ports/1/link_layer", "InfiniBand\n");
    dir.write("mlx5_0/ports/1/lid", "0x1a\n");
    dir.write("mlx5_0/ports/1/gids/0", "fe80:0000:0000:0000:248a:0703:0049:d4f0\n");
    dir.write("mlx5_0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
    dir.write("mlx5_0/ports/2/state", "1: DOWN\n");
    dir.write("mlx5_0/ports/2/link_layer", "InfiniBand\n");
  }
  RdmaOptions options(const char* hca = "") const {
    RdmaOptions o;
    o.sysfsRoot = dir.path();
    o.hca = HcaFilter::parse(hca);
    return o;
  }
};

bool loads(std::string*) { return true; }
bool missing(std::string* why) {
  *why = "libibverbs.so.1: cannot open shared object file";
  return false;
}

TEST(RdmaDiscovery, FindsPortsAndTheirGids) {
  FakeSysfs sysfs;
  const RdmaDiscovery ib = discoverRdma(sysfs.options("mlx5"), loads);
  ASSERT_EQ(ib.reach.state, RdmaState::kUsable) << ib.detail;
  EXPECT_EQ(ib.reach.device, "mlx5_0");
  EXPECT_EQ(ib.reach.linkLayer, LinkLayer::kInfiniBand);
  EXPECT_EQ(ib.reach.subnetPrefix, 0xfe80000000000000u);
  ASSERT_EQ(ib.ports.size(), 1u);
  EXPECT_EQ(ib.ports[0].lid, 0x1a);
  EXPECT_NE(ib.detail.find("mlx5_0:2 not active"), std::string::npos) << ib.detail;

  const RdmaDiscovery roce = discoverRdma(sysfs.options("rxe"), loads);
  ASSERT_EQ(roce.reach.state, RdmaState::kUsable) << roce.detail;
  EXPECT_EQ(roce.reach.gidType, GidType::kRoceV2);
  EXPECT_EQ(roce.ports[0].gid.index, 1);
}

TEST(RdmaDiscovery, SaysWhyNothingIsUsable) {
  FakeSysfs sysfs;
  const RdmaDiscovery excluded = discoverRdma(sysfs.options("^mlx5_0,rxe0"), loads);
  EXPECT_EQ(excluded.reach.state, RdmaState::kNoDevice);
  EXPECT_NE(excluded.detail.find("HOOP_IB_HCA='^mlx5_0,rxe0' allows none"), std::string::npos)
      << excluded.detail;
  const RdmaDiscovery down = discoverRdma(sysfs.options("mlx5_0:2"), loads);
  EXPECT_EQ(down.reach.state, RdmaState::kPortDown);
  RdmaOptions badIndex = sysfs.options("rxe0");
  badIndex.gidIndex = 7;
  const RdmaDiscovery noGid = discoverRdma(badIndex, loads);
  EXPECT_EQ(noGid.reach.state, RdmaState::kNoGid);
  EXPECT_NE(noGid.detail.find("HOOP_IB_GID_INDEX=7"), std::string::npos) << noGid.detail;
  const RdmaDiscovery noLibrary = discoverRdma(sysfs.options(), missing);
  EXPECT_EQ(noLibrary.reach.state, RdmaState::kNoLibrary);
  EXPECT_NE(noLibrary.detail.find("cannot open shared object"), std::string::npos);
  test::ScratchDir empty;
  RdmaOptions none;
  none.sysfsRoot = empty.path() + "/absent";
  EXPECT_EQ(discoverRdma(none, loads).reach.state, RdmaState::kNoDevice);
}

}  // namespace
}  // namespace hoop
