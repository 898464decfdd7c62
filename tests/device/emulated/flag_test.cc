// Emulated flag operations: waits released by another thread or stream, the mask, and counters.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

TEST(DeviceEmulatedFlagTest, AStreamWaitsUntilAnotherThreadSetsTheFlag) {
  Stream stream;
  alignas(4) static uint32_t flag = 0;
  alignas(4) static uint32_t done = 0;
  storeWord(flag, 0);
  storeWord(done, 0);
  emulation().waitFlag(&flag, 1, stream);
  emulation().writeFlag(&done, 7, stream);
  settle();
  EXPECT_EQ(loadWord(done), 0u) << "the stream went past an unset flag";
  std::thread setter([] { storeWord(flag, 1); });
  setter.join();
  emulation().synchronize(stream);
  EXPECT_EQ(loadWord(done), 7u);
}

TEST(DeviceEmulatedFlagTest, OnlyBitsInTheMaskRelease) {
  Stream stream;
  alignas(4) static uint32_t flag = 0;
  alignas(4) static uint32_t done = 0;
  storeWord(flag, 0);
  storeWord(done, 0);
  emulation().waitFlag(&flag, 0x4, stream);
  emulation().addToCounter(&done, stream);
  storeWord(flag, 0x3 | 0x8);  // set bits, none of them in the mask
  settle();
  EXPECT_EQ(loadWord(done), 0u) << "bits outside the mask released the wait";
  storeWord(flag, 0x4 | 0x1);
  emulation().synchronize(stream);
  EXPECT_EQ(loadWord(done), 1u);
}

TEST(DeviceEmulatedFlagTest, AZeroMaskOrAMisalignedFlagIsRefused) {
  Stream stream;
  alignas(8) uint32_t words[2] = {0, 0};
  EXPECT_THROW(emulation().waitFlag(&words[0], 0, stream), Error);
  auto* misaligned = reinterpret_cast<uint32_t*>(reinterpret_cast<char*>(words) + 1);
  EXPECT_THROW(emulation().writeFlag(misaligned, 1, stream), Error);
  EXPECT_THROW(emulation().addToCounter(nullptr, stream), Error);
  emulation().synchronize(stream);
}

TEST(DeviceEmulatedFlagTest, AWrittenFlagPublishesTheWritesBeforeIt) {
  // producer: copy, then flag; consumer: wait for the flag, then copy what the producer wrote.
  Stream producer, consumer;
  alignas(4) static uint32_t ready = 0;
  storeWord(ready, 0);
  std::vector<uint64_t> source(1 << 14), middle(1 << 14, 0), result(1 << 14, 0);
  for (size_t i = 0; i < source.size(); ++i) source[i] = i * 0x9e3779b97f4a7c15ULL;
  const size_t bytes = source.size() * sizeof(uint64_t);
  emulation().waitFlag(&ready, 1, consumer);
  emulation().copy(result.data(), middle.data(), bytes, consumer);
  emulation().copy(middle.data(), source.data(), bytes, producer);
  emulation().writeFlag(&ready, 1, producer);
  emulation().synchronize(consumer);
  emulation().synchronize(producer);
  EXPECT_EQ(result, source);
}

TEST(DeviceEmulatedFlagTest, CountersCountEveryIncrementFromEveryStream) {
  Stream first, second;
  uint32_t counter = 0;
  constexpr uint32_t kEach = 5000;
  for (uint32_t i = 0; i < kEach; ++i) {
    emulation().addToCounter(&counter, first);
    emulation().addToCounter(&counter, second);
  }
  emulation().synchronize(first);
  emulation().synchronize(second);
  EXPECT_EQ(loadWord(counter), 2 * kEach);
}

}  // namespace
}  // namespace hoop::testing
