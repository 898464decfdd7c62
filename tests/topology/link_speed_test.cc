#include "topology/link_speed.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace hoop {
namespace {

TEST(LinkSpeed, NetworkInterfaceFromSysfs) {
  test::ScratchDir sys;
  sys.write("class/net/eth9/speed", "25000\n");
  sys.write("class/net/down0/speed", "-1\n");
  sys.write("class/net/odd0/speed", "fast\n");
  EXPECT_EQ(networkLinkSpeedMbps("eth9", sys.path()), 25000u);
  EXPECT_EQ(networkLinkSpeedMbps("down0", sys.path()), 0u);
  EXPECT_EQ(networkLinkSpeedMbps("odd0", sys.path()), 0u);
  EXPECT_EQ(networkLinkSpeedMbps("missing0", sys.path()), 0u);
}

TEST(LinkSpeed, RdmaDeviceTakesItsFastestPort) {
  test::ScratchDir sys;
  sys.write("class/infiniband/mlx5_9/ports/1/rate", "100 Gb/sec (4X EDR)\n");
  sys.write("class/infiniband/mlx5_9/ports/2/rate", "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(rdmaLinkSpeedMbps("mlx5_9", sys.path()), 200000u);
  EXPECT_EQ(rdmaLinkSpeedMbps("mlx5_8", sys.path()), 0u);
}

TEST(LinkSpeed, RdmaRateText) {
  EXPECT_EQ(parseRdmaRateMbps("400 Gb/sec (4X NDR)"), 400000u);
  EXPECT_EQ(parseRdmaRateMbps("2.5 Gb/sec (1X SDR)"), 2500u);
  EXPECT_EQ(parseRdmaRateMbps("56 Gb/sec (4X FDR)"), 56000u);
  EXPECT_EQ(parseRdmaRateMbps(""), 0u);
  EXPECT_EQ(parseRdmaRateMbps("100 Mb/sec"), 0u);
  EXPECT_EQ(parseRdmaRateMbps("invalid"), 0u);
}

}  // namespace
}  // namespace hoop
