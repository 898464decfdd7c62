// HOOP_IB_HCA's grammar and the choice of a GID from a port's table (real tables' shapes: an
// InfiniBand port, a RoCE port with IPv4 and IPv6 addresses, one with RoCE v1 only).
#include <gtest/gtest.h>

#include "base/error.h"
#include "scratch_dir.h"
#include "transport/rdma/gid_table.h"
#include "transport/rdma/hca_filter.h"

namespace hoop {
namespace {

TEST(HcaFilter, EmptyAllowsEverything) {
  const HcaFilter filter = HcaFilter::parse("");
  EXPECT_TRUE(filter.empty());
  EXPECT_TRUE(filter.allows("mlx5_0", 1));
  EXPECT_TRUE(filter.allows("rxe0", 2));
}

TEST(HcaFilter, NamesArePrefixesUnlessExact) {
  const HcaFilter prefix = HcaFilter::parse("mlx5");
  EXPECT_TRUE(prefix.allows("mlx5_0", 1));
  EXPECT_TRUE(prefix.allows("mlx5_12", 2));
  EXPECT_FALSE(prefix.allows("rxe0", 1));
  const HcaFilter exact = HcaFilter::parse("=mlx5_1");
  EXPECT_TRUE(exact.allows("mlx5_1", 1));
  EXPECT_FALSE(exact.allows("mlx5_12", 1));
  EXPECT_FALSE(exact.allows("mlx5_0", 1));
}

TEST(HcaFilter, PortsNarrowAnEntry) {
  const HcaFilter filter = HcaFilter::parse("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(filter.allows("mlx5_0", 1));
  EXPECT_FALSE(filter.allows("mlx5_0", 2));
  EXPECT_TRUE(filter.allows("mlx5_1", 2));
  EXPECT_FALSE(filter.allows("mlx4_0", 1));
}

TEST(HcaFilter, CaretExcludes) {
  const HcaFilter filter = HcaFilter::parse("^mlx5_0:2,rxe");
  EXPECT_TRUE(filter.allows("mlx5_0", 1));
  EXPECT_FALSE(filter.allows("mlx5_0", 2));
  EXPECT_FALSE(filter.allows("rxe0", 1));
  EXPECT_TRUE(filter.allows("mlx5_1", 2));
  const HcaFilter exact = HcaFilter::parse("^=mlx5_1");
  EXPECT_FALSE(exact.allows("mlx5_1", 1));
  EXPECT_TRUE(exact.allows("mlx5_10", 1));
}

TEST(HcaFilter, GarbageNamesTheSetting) {
  for (const char* bad :
       {"^", "=", "mlx5_0:", "mlx5_0:x", "mlx5_0:0", "mlx5_0:256", ",mlx5_0", "mlx5_0,", ":1"}) {
    try {
      HcaFilter::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(error.what()).find("HOOP_IB_HCA='"), std::string::npos) << bad;
    }
  }
}

Gid gidOf(const char* text) {
  const auto gid = parseGid(text);
  EXPECT_TRUE(gid.has_value()) << text;
  return gid.value_or(Gid{});
}

TEST(GidTable, ParsesSysfsText) {
  const Gid gid = gidOf("fe80:0000:0000:0000:5054:00ff:fe12:3456");
  EXPECT_EQ(gid[0], 0xfe);
  EXPECT_EQ(gid[15], 0x56);
  EXPECT_TRUE(isLinkLocal(gid));
  EXPECT_FALSE(isIpv4Mapped(gid));
  const Gid v4 = gidOf("0000:0000:0000:0000:0000:ffff:0a00:020f");
  EXPECT_TRUE(isIpv4Mapped(v4));
  EXPECT_EQ(gidText(v4), "::ffff:10.0.2.15");
  EXPECT_FALSE(parseGid("fe80::1").has_value());
  EXPECT_FALSE(parseGid("fe80:0000:0000:0000:5054:00ff:fe12:345g").has_value());
  EXPECT_FALSE(parseGid("").has_value());
}

std::vector<GidEntry> roceTable() {
  // A RoCE port: each address of its interface twice, RoCE v1 then v2, link-local first.
  return {
      {0, gidOf("fe80:0000:0000:0000:5054:00ff:fe12:3456"), GidType::kRoceV1},
      {1, gidOf("fe80:0000:0000:0000:5054:00ff:fe12:3456"), GidType::kRoceV2},
      {2, gidOf("0000:0000:0000:0000:0000:ffff:0a00:020f"), GidType::kRoceV1},
      {3, gidOf("0000:0000:0000:0000:0000:ffff:0a00:020f"), GidType::kRoceV2},
      {4, gidOf("2001:0db8:0000:0000:0000:0000:0000:0007"), GidType::kRoceV1},
      {5, gidOf("2001:0db8:0000:0000:0000:0000:0000:0007"), GidType::kRoceV2},
  };
}

TEST(GidTable, RoceDefaultIsV2OfAnIpv4Address) {
  const GidChoice choice = chooseGid(roceTable(), LinkLayer::kEthernet, std::nullopt);
  EXPECT_EQ(choice.index, 3);
  EXPECT_EQ(choice.type, GidType::kRoceV2);
}

TEST(GidTable, RoceWithoutIpv4TakesAGlobalV6ThenLinkLocal) {
  std::vector<GidEntry> table = roceTable();
  table.erase(table.begin() + 2, table.begin() + 4);  // no IPv4 address
  EXPECT_EQ(chooseGid(table, LinkLayer::kEthernet, std::nullopt).index, 5);
  table.pop_back();
  table.pop_back();  // link-local only
  EXPECT_EQ(chooseGid(table, LinkLayer::kEthernet, std::nullopt).index, 1);
}

TEST(GidTable, RoceV1OnlyWhereNoV2Exists) {
  std::vector<GidEntry> table;
  for (const GidEntry& entry : roceTable()) {
    if (entry.type == GidType::kRoceV1) table.push_back(entry);
  }
  const GidChoice choice = chooseGid(table, LinkLayer::kEthernet, std::nullopt);
  EXPECT_EQ(choice.index, 2);
  EXPECT_EQ(choice.type, GidType::kRoceV1);
}

TEST(GidTable, InfinibandUsesThePortGid) {
  const std::vector<GidEntry> table = {
      {0, gidOf("fe80:0000:0000:0000:248a:0703:0049:d4f0"), GidType::kRoceV1},
      {1, gidOf("fe80:0000:0000:0001:248a:0703:0049:d4f0"), GidType::kRoceV1}};
  const GidChoice choice = chooseGid(table, LinkLayer::kInfiniBand, std::nullopt);
  EXPECT_EQ(choice.index, 0);
  EXPECT_EQ(choice.type, GidType::kInfiniBand);
}

TEST(GidTable, RequestedIndexWinsOrIsExplained) {
  EXPECT_EQ(chooseGid(roceTable(), LinkLayer::kEthernet, 2).index, 2);
  const GidChoice missing = chooseGid(roceTable(), LinkLayer::kEthernet, 9);
  EXPECT_EQ(missing.index, -1);
  EXPECT_NE(missing.why.find("HOOP_IB_GID_INDEX=9"), std::string::npos) << missing.why;
  const GidChoice empty = chooseGid({}, LinkLayer::kEthernet, std::nullopt);
  EXPECT_EQ(empty.index, -1);
  EXPECT_FALSE(empty.why.empty());
}

TEST(GidTable, ReadsAFakeSysfsPort) {
  test::ScratchDir dir;
  const std::string port = dir.path() + "/rxe0/ports/1";
  dir.write("rxe0/ports/1/gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
  dir.write("rxe0/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
  dir.write("rxe0/ports/1/gids/1", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
  dir.write("rxe0/ports/1/gid_attrs/types/1", "RoCE v2\n");
  dir.write("rxe0/ports/1/gids/2", "0000:0000:0000:0000:0000:0000:0000:0000\n");  // unused
  dir.write("rxe0/ports/1/gids/3", "0000:0000:0000:0000:0000:ffff:0a00:020f\n");
  dir.write("rxe0/ports/1/gid_attrs/types/3", "RoCE v2\n");
  const std::vector<GidEntry> table = readGidTable(port);
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].type, GidType::kRoceV1);
  EXPECT_EQ(table[2].index, 3);
  EXPECT_EQ(chooseGid(table, LinkLayer::kEthernet, std::nullopt).index, 3);
}

}  // namespace
}  // namespace hoop
