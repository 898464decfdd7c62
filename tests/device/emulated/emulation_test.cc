// deviceRuntime() under HOOP_DEVICE_EMULATION=1, and what the emulation says about itself.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

TEST(DeviceEmulatedRuntimeTest, TheEnvironmentSelectsTheEmulation) {
  ASSERT_TRUE(deviceEmulated());
  DeviceRuntime& runtime = deviceRuntime();
  EXPECT_EQ(std::string(runtime.name()), "emulated");
  EXPECT_EQ(&runtime, &deviceRuntime());  // one runtime per process
  EXPECT_EQ(runtime.currentDevice(), 0);
  EXPECT_EQ(runtime.describeDevice(0), "emulated device 0 (CPU threads)");
  EXPECT_THROW(runtime.describeDevice(1), Error);
}

TEST(DeviceEmulatedRuntimeTest, NullStreamIsRefused) {
  uint32_t counter = 0;
  try {
    emulation().addToCounter(&counter, nullptr);
    FAIL() << "a null stream was accepted";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("no default stream"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace hoop::testing
