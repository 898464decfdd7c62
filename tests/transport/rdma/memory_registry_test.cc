// The buffers registered with hoopCommRegister: lookups by range, shared registrations, and what
// transports attach to a region (made once per device, released with the region).
#include "transport/memory_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "base/error.h"
#include "transport/rdma/rdma_dmabuf.h"

namespace hoop {
namespace {

struct Counted final : MemoryRegistry::Attachment {
  explicit Counted(int& live) : live_(live) { ++live_; }
  ~Counted() override { --live_; }
  int& live_;
};

TEST(MemoryRegistry, FindsTheRegionHoldingARange) {
  std::vector<char> buffer(1000);
  MemoryRegistry registry;
  const uint64_t handle = registry.add(buffer.data(), buffer.size());
  EXPECT_TRUE(registry.covering(buffer.data(), 1000).has_value());
  EXPECT_TRUE(registry.covering(buffer.data() + 100, 900).has_value());
  EXPECT_FALSE(registry.covering(buffer.data() + 100, 901).has_value());
  EXPECT_FALSE(registry.covering(buffer.data() - 1, 10).has_value());
  registry.remove(handle);
  EXPECT_FALSE(registry.covering(buffer.data(), 1).has_value());
}

TEST(MemoryRegistry, TheSmallestOfNestedRegionsIsFound) {
  std::vector<char> buffer(1000);
  MemoryRegistry registry;
  registry.add(buffer.data(), 1000);
  registry.add(buffer.data() + 200, 100);
  const auto region = registry.covering(buffer.data() + 250, 10);
  ASSERT_TRUE(region.has_value());
  EXPECT_EQ(region->bytes, 100u);
}

TEST(MemoryRegistry, AttachmentsAreMadeOncePerDomainAndGoWithTheLastHandle) {
  std::vector<char> buffer(4096);
  MemoryRegistry registry;
  int live = 0;
  int made = 0;
  auto make = [&]() -> std::unique_ptr<MemoryRegistry::Attachment> {
    ++made;
    return std::make_unique<Counted>(live);
  };
  const int deviceA = 0;
  const int deviceB = 0;
  const uint64_t first = registry.add(buffer.data(), buffer.size());
  const uint64_t second = registry.add(buffer.data(), buffer.size());  // the same range again
  EXPECT_NE(first, second);
  EXPECT_EQ(registry.regionCount(), 1u);
  const auto region = registry.covering(buffer.data(), 64);
  ASSERT_TRUE(region.has_value());
  auto* a = registry.attachment(region->id, &deviceA, make);
  EXPECT_EQ(registry.attachment(region->id, &deviceA, make), a);
  EXPECT_NE(registry.attachment(region->id, &deviceB, make), a);
  EXPECT_EQ(made, 2);
  EXPECT_EQ(live, 2);
  registry.remove(first);
  EXPECT_EQ(live, 2);  // the other handle keeps the region
  registry.remove(second);
  EXPECT_EQ(live, 0);
  EXPECT_EQ(registry.attachment(region->id, &deviceA, make), nullptr);
}

TEST(MemoryRegistry, BadHandlesAndRangesAreInvalidArguments) {
  MemoryRegistry registry;
  char byte = 0;
  try {
    registry.remove(42);
    ADD_FAILURE();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
  }
  EXPECT_THROW(registry.add(nullptr, 10), Error);
  EXPECT_THROW(registry.add(&byte, 0), Error);
  const uint64_t handle = registry.add(&byte, 1);
  registry.remove(handle);
  EXPECT_THROW(registry.remove(handle), Error);
}

}  // namespace
}  // namespace hoop

namespace hoop {
namespace {

// GPUDirect RDMA cannot run without a GPU and an RDMA card; what can be checked everywhere is
// that host memory is never taken for device memory, and that the refusal says why.
TEST(Dmabuf, HostMemoryIsRefusedWithAReason) {
  std::vector<char> host(4096);
  const DmabufSupport support = dmabufSupport(host.data());
  EXPECT_FALSE(support.supported);
  EXPECT_FALSE(support.why.empty());
}

}  // namespace
}  // namespace hoop
