// The HOOP_IB_* settings as a communicator reads them: defaults, values, and a clear error naming
// the variable for each value out of range.
#include <gtest/gtest.h>

#include "base/error.h"
#include "core/config.h"
#include "scoped_env.h"

namespace hoop {
namespace {

using test::ScopedEnv;

TEST(RdmaSettings, DefaultsAndValues) {
  {
    const Config config = Config::fromEnvironment();
    EXPECT_TRUE(config.rdma.hca.empty());
    EXPECT_FALSE(config.rdma.gidIndex.has_value());
    EXPECT_EQ(config.rdma.queuePairs, 1u);
    EXPECT_EQ(config.rdma.timeout, 18);
    EXPECT_EQ(config.rdma.retryCount, 7);
    EXPECT_EQ(config.rdma.slots, 4u);
    EXPECT_EQ(config.rdma.slotBytes, size_t{512} << 10);
  }
  ScopedEnv hca("HOOP_IB_HCA", "=mlx5_1:1");
  ScopedEnv gid("HOOP_IB_GID_INDEX", "3");
  ScopedEnv qps("HOOP_IB_QPS_PER_CONNECTION", "4");
  ScopedEnv timeout("HOOP_IB_TIMEOUT", "14");
  ScopedEnv retry("HOOP_IB_RETRY_CNT", "2");
  ScopedEnv slots("HOOP_IB_SLOTS", "16");
  ScopedEnv slotBytes("HOOP_IB_SLOT_SIZE", "128K");
  const Config config = Config::fromEnvironment();
  EXPECT_TRUE(config.rdma.hca.allows("mlx5_1", 1));
  EXPECT_FALSE(config.rdma.hca.allows("mlx5_1", 2));
  EXPECT_EQ(config.rdma.gidIndex, 3);
  EXPECT_EQ(config.rdma.queuePairs, 4u);
  EXPECT_EQ(config.rdma.timeout, 14);
  EXPECT_EQ(config.rdma.retryCount, 2);
  EXPECT_EQ(config.rdma.slots, 16u);
  EXPECT_EQ(config.rdma.slotBytes, size_t{128} << 10);
}

TEST(RdmaSettings, OutOfRangeValuesNameTheVariable) {
  const std::pair<const char*, const char*> bad[] = {
      {"HOOP_IB_QPS_PER_CONNECTION", "0"}, {"HOOP_IB_QPS_PER_CONNECTION", "17"},
      {"HOOP_IB_TIMEOUT", "32"},           {"HOOP_IB_RETRY_CNT", "8"},
      {"HOOP_IB_GID_INDEX", "-1"},         {"HOOP_IB_SLOTS", "1"},
      {"HOOP_IB_SLOT_SIZE", "1K"},         {"HOOP_IB_HCA", "mlx5_0:x"},
  };
  for (const auto& [name, value] : bad) {
    ScopedEnv setting(name, value);
    try {
      Config::fromEnvironment();
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), hoopInvalidArgument);
      EXPECT_NE(std::string(error.what()).find(name), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace hoop
