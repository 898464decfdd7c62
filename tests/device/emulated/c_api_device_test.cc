// The C API's device questions (hoopPointerIsDevice, hoopStreamSynchronize, hoopGetDevice,
// hoopMemAlloc, hoopMemFree) answered by the emulated device runtime.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "emulated_test_util.h"
#include "hoop/hoop.h"

namespace hoop::testing {
namespace {

TEST(DeviceEmulatedCApiTest, MemoryPointersStreamsAndTheDevice) {
  emulation();
  void* memory = nullptr;
  ASSERT_EQ(hoopMemAlloc(&memory, 4096), hoopSuccess) << hoopGetLastError(nullptr);
  ASSERT_NE(memory, nullptr);
  int isDevice = -1;
  ASSERT_EQ(hoopPointerIsDevice(memory, &isDevice), hoopSuccess);
  EXPECT_EQ(isDevice, 1);
  int onTheStack = 0;
  ASSERT_EQ(hoopPointerIsDevice(&onTheStack, &isDevice), hoopSuccess);
  EXPECT_EQ(isDevice, 0);
  int device = -1;
  ASSERT_EQ(hoopGetDevice(&device), hoopSuccess);
  EXPECT_EQ(device, 0);

  // hoopStreamSynchronize returns only once the stream's earlier work has run: here a wait for a
  // flag another thread sets later, then a write.
  Stream stream;
  alignas(4) static uint32_t flag = 0;
  alignas(4) static uint32_t done = 0;
  storeWord(flag, 0);
  storeWord(done, 0);
  emulation().waitFlag(&flag, 1, stream);
  emulation().writeFlag(&done, 7, stream);
  std::thread setter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    storeWord(flag, 1);
  });
  ASSERT_EQ(hoopStreamSynchronize(stream), hoopSuccess) << hoopGetLastError(nullptr);
  EXPECT_EQ(loadWord(done), 7u) << "hoopStreamSynchronize returned before the stream's work ran";
  setter.join();
  // The emulation has no legacy default stream: NULL has nothing to wait for.
  EXPECT_EQ(hoopStreamSynchronize(nullptr), hoopSuccess);

  EXPECT_EQ(hoopMemFree(memory), hoopSuccess);
  EXPECT_EQ(hoopMemFree(&onTheStack), hoopInvalidArgument);
  EXPECT_NE(std::string(hoopGetLastError(nullptr)).find("is not device memory"), std::string::npos)
      << hoopGetLastError(nullptr);
}

}  // namespace
}  // namespace hoop::testing
