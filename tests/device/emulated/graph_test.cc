// Emulated graph capture: operations recorded instead of run, replayed in order, many times.
#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "device/emulated/emulated_graph.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

using emulated::beginCapture;
using emulated::endCapture;
using emulated::launchGraph;

TEST(DeviceEmulatedGraphTest, CapturedOperationsRunOnlyWhenReplayed) {
  Stream stream, other;
  uint32_t counter = 0;
  std::vector<int> source = {1, 2, 3, 4}, target(4, 0);
  EXPECT_FALSE(emulation().capturing(stream));
  beginCapture(stream);
  EXPECT_TRUE(emulation().capturing(stream));
  EXPECT_FALSE(emulation().capturing(other));
  emulation().copy(target.data(), source.data(), source.size() * sizeof(int), stream);
  emulation().addToCounter(&counter, stream);
  EXPECT_THROW(emulation().synchronize(stream), Error);  // as CUDA: no host wait while capturing
  auto graph = endCapture(stream);
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(graph->size(), 2u);
  EXPECT_FALSE(emulation().capturing(stream));

  emulation().synchronize(stream);  // nothing was queued: the capture ran nothing
  EXPECT_EQ(loadWord(counter), 0u);
  EXPECT_EQ(target, std::vector<int>(4, 0));

  for (int replay = 0; replay < 3; ++replay) launchGraph(*graph, replay == 1 ? other : stream);
  emulation().synchronize(stream);
  emulation().synchronize(other);
  EXPECT_EQ(loadWord(counter), 3u);
  EXPECT_EQ(target, source);
}

TEST(DeviceEmulatedGraphTest, ReplaysKeepTheCapturedOrder) {
  // x = 1, then x = x + x... as a chain of dependent kernels: out of order gives another number.
  Stream stream;
  std::vector<int32_t> x(1, 0);
  const std::vector<int32_t> one = {1};
  beginCapture(stream);
  emulation().copy(x.data(), one.data(), sizeof(int32_t), stream);
  for (int i = 0; i < 10; ++i) {
    emulation().reduceCopyFinal(x.data(), nullptr, x.data(), x.data(), 1, DataType::kInt32,
                                RedOp::kSum, 1, stream);
  }
  auto graph = endCapture(stream);
  for (int replay = 0; replay < 3; ++replay) {
    x[0] = -5;
    launchGraph(*graph, stream);
    emulation().synchronize(stream);
    EXPECT_EQ(x[0], 1024);
  }
}

TEST(DeviceEmulatedGraphTest, CaptureCallsOutOfTurnAreRefused) {
  Stream stream;
  EXPECT_THROW(endCapture(stream), Error);
  beginCapture(stream);
  EXPECT_THROW(beginCapture(stream), Error);
  auto graph = endCapture(stream);
  EXPECT_EQ(graph->size(), 0u);
}

}  // namespace
}  // namespace hoop::testing
