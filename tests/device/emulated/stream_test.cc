// Emulated streams: order, errors, and destruction that never blocks.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "base/error.h"
#include "device/emulated/emulated_stream.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

using emulated::EmulatedStream;

TEST(DeviceEmulatedStreamTest, RunsOperationsInTheOrderEnqueued) {
  Stream stream;
  std::vector<int> order;  // written only by the stream's thread
  constexpr int kOperations = 2000;
  for (int i = 0; i < kOperations; ++i) {
    EmulatedStream::from(stream).enqueue([&order, i] { order.push_back(i); });
  }
  emulation().synchronize(stream);
  ASSERT_EQ(order.size(), static_cast<size_t>(kOperations));
  for (int i = 0; i < kOperations; ++i) ASSERT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(DeviceEmulatedStreamTest, CopiesRunInOrderThroughTheRuntime) {
  // Each copy reads what the one before wrote: run out of order, `d` would not be `a`.
  Stream stream;
  std::vector<int> a(4096), b(4096, 0), c(4096, 0), d(4096, 0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int>(i * 7 + 1);
  const size_t bytes = a.size() * sizeof(int);
  emulation().copy(b.data(), a.data(), bytes, stream);
  emulation().copy(c.data(), b.data(), bytes, stream);
  emulation().copy(d.data(), c.data(), bytes, stream);
  emulation().synchronize(stream);
  EXPECT_EQ(d, a);
}

TEST(DeviceEmulatedStreamTest, SynchronizeRethrowsAnOperationsErrorAndLaterOnesAreSkipped) {
  Stream stream;
  uint32_t counter = 0;
  emulation().addToCounter(&counter, stream);
  EmulatedStream::from(stream).enqueue([] { fail(hoopRemoteError, "peer went away"); });
  emulation().addToCounter(&counter, stream);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the error is sticky, as CUDA's are
    try {
      emulation().synchronize(stream);
      FAIL() << "synchronize did not report the failed operation";
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), hoopRemoteError);
      EXPECT_NE(std::string(error.what()).find("peer went away"), std::string::npos)
          << error.what();
    }
  }
  EXPECT_EQ(loadWord(counter), 1u);  // the one before ran, the one after did not
}

TEST(DeviceEmulatedStreamTest, SynchronizeWaitsForEverythingEnqueuedBefore) {
  Stream stream;
  alignas(4) static uint32_t gate = 0;
  storeWord(gate, 0);
  uint32_t counter = 0;
  emulation().waitFlag(&gate, 1, stream);
  emulation().addToCounter(&counter, stream);
  std::thread opener([] {
    settle();
    storeWord(gate, 1);
  });
  emulation().synchronize(stream);
  EXPECT_EQ(loadWord(counter), 1u);
  opener.join();
}

TEST(DeviceEmulatedStreamTest, DestroyingAStreamStuckOnAFlagReturnsAtOnce) {
  // Static: the stream's thread outlives this test's frame if the test fails.
  alignas(4) static uint32_t gate = 0;
  alignas(4) static uint32_t counter = 0;
  storeWord(gate, 0);
  storeWord(counter, 0);
  DeviceStream stream = emulation().createStream();
  emulation().waitFlag(&gate, 1, stream);
  emulation().addToCounter(&counter, stream);
  const auto start = std::chrono::steady_clock::now();
  emulation().destroyStream(stream);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::milliseconds(100));
  // The stream still finishes what was queued before it was destroyed.
  settle();
  EXPECT_EQ(loadWord(counter), 0u);
  storeWord(gate, 1);
  EXPECT_TRUE(eventually([] { return loadWord(counter) == 1; }));
}

TEST(DeviceEmulatedStreamTest, AStreamStuckForeverDoesNotHoldUpTheProcess) {
  // Never set: the thread lingers until the process exits, which must still exit cleanly (the
  // test binary's exit status says so).
  alignas(4) static uint32_t never = 0;
  DeviceStream stream = emulation().createStream();
  emulation().waitFlag(&never, 1, stream);
  emulation().destroyStream(stream);
  SUCCEED();
}

}  // namespace
}  // namespace hoop::testing
