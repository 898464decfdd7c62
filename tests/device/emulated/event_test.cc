// Emulated events: ordering one stream after another, CUDA's "latest record at the time of the
// wait" rule, and waits on events never recorded.
#include <gtest/gtest.h>

#include <vector>

#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

TEST(DeviceEmulatedEventTest, AnEventOrdersTwoStreams) {
  Stream producer, consumer;
  Event produced;
  alignas(4) static uint32_t gate = 0;
  storeWord(gate, 0);
  std::vector<int> source(1024), middle(1024, 0), result(1024, 0);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<int>(i) - 500;
  const size_t bytes = source.size() * sizeof(int);

  emulation().waitFlag(&gate, 1, producer);
  emulation().copy(middle.data(), source.data(), bytes, producer);
  emulation().recordEvent(produced, producer);
  emulation().streamWaitEvent(consumer, produced);
  emulation().copy(result.data(), middle.data(), bytes, consumer);

  settle();  // the consumer must be held by the event, not run ahead
  EXPECT_EQ(result, std::vector<int>(1024, 0));
  storeWord(gate, 1);
  emulation().synchronize(consumer);
  EXPECT_EQ(result, source);
  emulation().synchronize(producer);
}

TEST(DeviceEmulatedEventTest, AWaitNamesTheRecordLatestWhenItWasEnqueued) {
  Stream first, second, waiter;
  Event event;
  alignas(4) static uint32_t firstGate = 0;
  alignas(4) static uint32_t waiterGate = 0;
  storeWord(firstGate, 0);
  storeWord(waiterGate, 0);
  uint32_t counter = 0;
  emulation().waitFlag(&firstGate, 1, first);
  emulation().recordEvent(event, first);  // record 1: held by firstGate
  // The waiter reaches its wait only after record 2 exists and is done: a wait that looked up
  // the latest record when it runs, rather than when it was enqueued, would go straight on.
  emulation().waitFlag(&waiterGate, 1, waiter);
  emulation().streamWaitEvent(waiter, event);  // names record 1
  emulation().addToCounter(&counter, waiter);
  emulation().recordEvent(event, second);  // record 2: done at once
  emulation().synchronize(second);
  storeWord(waiterGate, 1);

  settle();
  EXPECT_EQ(loadWord(counter), 0u) << "the wait took the later record";
  storeWord(firstGate, 1);
  emulation().synchronize(waiter);
  EXPECT_EQ(loadWord(counter), 1u);
}

TEST(DeviceEmulatedEventTest, WaitingOnANeverRecordedEventDoesNotWait) {
  Stream stream;
  Event event;
  uint32_t counter = 0;
  emulation().streamWaitEvent(stream, event);
  emulation().addToCounter(&counter, stream);
  ASSERT_TRUE(eventually([&] { return loadWord(counter) == 1; }));
  emulation().synchronize(stream);
}

}  // namespace
}  // namespace hoop::testing
