// Emulated multi-stream graph capture: streams that join a capture through events, the branches
// and edges a replay runs, and CUDA's rules on joining back and on outside events.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "device/emulated/emulated_graph.h"
#include "device/emulated/emulated_stream.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

using emulated::beginCapture;
using emulated::EmulatedGraph;
using emulated::EmulatedStream;
using emulated::endCapture;
using emulated::launchGraph;

// `call` fails with hoopInvalidUsage and a message holding `words`.
void expectUsageError(const std::function<void()>& call, const std::string& words) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one about: " << words;
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidUsage) << error.what();
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

// DeviceCallQueue's pattern, twice as two calls would: main records `ready`, the send stream
// waits on it and sends (waitFlag, copy, writeFlag), records `done`, and main waits on `done`
// and reads what was sent.
TEST(DeviceEmulatedCaptureTest, AForkAndJoinReplaysExactly) {
  Stream main, send;
  Event ready, done;
  alignas(4) static uint32_t go = 0;
  alignas(4) static uint32_t sent = 0;
  uint32_t mainCount = 0, sendCount = 0;
  constexpr size_t kCalls = 2, kElements = 512;
  const size_t bytes = kElements * sizeof(int);
  std::vector<std::vector<int>> source(kCalls, std::vector<int>(kElements)),
      staged(kCalls, std::vector<int>(kElements, 0)),
      sentOut(kCalls, std::vector<int>(kElements, 0)),
      received(kCalls, std::vector<int>(kElements, 0));
  storeWord(go, 1);  // open: a send that ran at capture time would show in `sent`
  storeWord(sent, 0);

  beginCapture(main);
  for (size_t call = 0; call < kCalls; ++call) {
    // Before the fork: the send must read what this wrote.
    emulation().copy(staged[call].data(), source[call].data(), bytes, main);
    emulation().recordEvent(ready, main);
    emulation().streamWaitEvent(send, ready);
    EXPECT_TRUE(emulation().capturing(send));
    emulation().waitFlag(&go, 1, send);
    emulation().copy(sentOut[call].data(), staged[call].data(), bytes, send);
    emulation().writeFlag(&sent, static_cast<uint32_t>(call + 1), send);
    emulation().addToCounter(&sendCount, send);
    emulation().recordEvent(done, send);
    emulation().streamWaitEvent(main, done);
    emulation().copy(received[call].data(), sentOut[call].data(), bytes, main);
  }
  emulation().addToCounter(&mainCount, main);
  EXPECT_THROW(emulation().synchronize(send), Error);  // joined: no host wait either
  auto graph = endCapture(main);
  EXPECT_FALSE(emulation().capturing(main));
  EXPECT_FALSE(emulation().capturing(send));
  EXPECT_EQ(graph->branches(), 2u);
  EXPECT_EQ(graph->size(), 6 * kCalls + 1);  // per call: 2 on main, 4 on send

  emulation().synchronize(send);  // nothing was queued on either stream
  emulation().synchronize(main);
  EXPECT_EQ(loadWord(sent), 0u);
  EXPECT_EQ(sentOut[0], std::vector<int>(kElements, 0));

  for (int replay = 0; replay < 3; ++replay) {
    for (size_t call = 0; call < kCalls; ++call) {
      for (size_t i = 0; i < kElements; ++i) {
        source[call][i] = replay * 100000 + static_cast<int>(call * kElements + i);
      }
    }
    storeWord(go, 0);
    storeWord(sent, 0);
    launchGraph(*graph, main);
    settle();  // the send waits for `go`, and main for the send
    EXPECT_EQ(loadWord(mainCount), static_cast<uint32_t>(replay));
    EXPECT_EQ(loadWord(sent), 0u);
    storeWord(go, 1);
    emulation().synchronize(main);  // the join: the send stream's work is done too
    EXPECT_EQ(received, source) << "replay " << replay;
    EXPECT_EQ(loadWord(sent), kCalls);
    EXPECT_EQ(loadWord(mainCount), static_cast<uint32_t>(replay + 1));
    EXPECT_EQ(loadWord(sendCount), static_cast<uint32_t>(kCalls * (replay + 1)));
  }
}

// The graph the next tests replay: `side` forks from main, waits for `gate`, counts and joins
// back; main counts `before` between the fork and the join, `after` after the join.
struct Counts {
  uint32_t before = 0, side = 0, after = 0;
};
std::unique_ptr<EmulatedGraph> captureGatedBranch(DeviceStream main, const uint32_t* gate,
                                                  Counts& counts) {
  Stream side;  // destroyed before the graph is replayed: the graph does not use it
  Event fork, join;
  beginCapture(main);
  emulation().recordEvent(fork, main);
  emulation().streamWaitEvent(side, fork);
  emulation().waitFlag(gate, 1, side);
  emulation().addToCounter(&counts.side, side);
  emulation().recordEvent(join, side);
  emulation().addToCounter(&counts.before, main);
  emulation().streamWaitEvent(main, join);
  emulation().addToCounter(&counts.after, main);
  return endCapture(main);
}

TEST(DeviceEmulatedCaptureTest, BranchesRunConcurrentlyAndEachReplayHasItsOwnJoin) {
  Stream main;
  alignas(4) static uint32_t gate = 0;
  Counts counts;
  auto graph = captureGatedBranch(main, &gate, counts);
  for (uint32_t replay = 0; replay < 3; ++replay) {
    storeWord(gate, 0);
    launchGraph(*graph, main);
    // main goes on up to its join while the side branch waits for the gate.
    ASSERT_TRUE(eventually([&] { return loadWord(counts.before) == replay + 1; }));
    settle();
    // A join satisfied by the replay before would let `after` through now.
    EXPECT_EQ(loadWord(counts.after), replay);
    EXPECT_EQ(loadWord(counts.side), replay);
    storeWord(gate, 1);
    emulation().synchronize(main);
    EXPECT_EQ(loadWord(counts.side), replay + 1);
    EXPECT_EQ(loadWord(counts.after), replay + 1);
  }

  // Two replays in flight on two streams: both wait for the gate, then both finish.
  Stream other;
  storeWord(gate, 0);
  launchGraph(*graph, main);
  launchGraph(*graph, other);
  ASSERT_TRUE(eventually([&] { return loadWord(counts.before) == 5; }));
  settle();
  EXPECT_EQ(loadWord(counts.after), 3u);
  storeWord(gate, 1);
  emulation().synchronize(main);
  emulation().synchronize(other);
  EXPECT_EQ(loadWord(counts.side), 5u);
  EXPECT_EQ(loadWord(counts.after), 5u);
}

TEST(DeviceEmulatedCaptureTest, TheGraphCanBeDestroyedAfterReplaysAndWithOneInFlight) {
  Stream main;
  alignas(4) static uint32_t gate = 0;
  Counts counts;
  auto graph = captureGatedBranch(main, &gate, counts);
  storeWord(gate, 1);
  for (int replay = 0; replay < 3; ++replay) launchGraph(*graph, main);
  emulation().synchronize(main);
  EXPECT_EQ(loadWord(counts.after), 3u);

  storeWord(gate, 0);
  launchGraph(*graph, main);
  ASSERT_TRUE(eventually([&] { return loadWord(counts.before) == 4; }));
  graph.reset();  // the replay in flight holds what it runs on
  storeWord(gate, 1);
  emulation().synchronize(main);
  EXPECT_EQ(loadWord(counts.side), 4u);
  EXPECT_EQ(loadWord(counts.after), 4u);
}

TEST(DeviceEmulatedCaptureTest, AFailedBranchFailsTheLaunchStreamNotTheGraph) {
  Stream main, side;
  Event fork, join;
  uint32_t after = 0;
  static std::atomic<int> failuresLeft;  // the first replay's branch fails, the next ones not
  failuresLeft = 1;
  beginCapture(main);
  emulation().recordEvent(fork, main);
  emulation().streamWaitEvent(side, fork);
  EmulatedStream::from(side).enqueue([] {
    if (failuresLeft.fetch_sub(1) > 0) fail(hoopRemoteError, "peer went away");
  });
  emulation().recordEvent(join, side);
  emulation().streamWaitEvent(main, join);
  emulation().addToCounter(&after, main);
  auto graph = endCapture(main);

  launchGraph(*graph, main);
  try {
    emulation().synchronize(main);
    FAIL() << "the branch's failure did not reach the launch stream";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopRemoteError) << error.what();
  }
  EXPECT_EQ(loadWord(after), 0u);  // skipped: the join saw the failure

  Stream fresh;  // `main` keeps its error; the graph's own streams do not
  launchGraph(*graph, fresh);
  emulation().synchronize(fresh);
  EXPECT_EQ(loadWord(after), 1u);
}

TEST(DeviceEmulatedCaptureTest, AStreamNotJoinedBackFailsEndCapture) {
  Stream main, send;
  Event ready, done;
  uint32_t counter = 0;

  // Never joined back.
  beginCapture(main);
  emulation().recordEvent(ready, main);
  emulation().streamWaitEvent(send, ready);
  emulation().addToCounter(&counter, send);
  expectUsageError([&] { endCapture(main); }, "cudaErrorStreamCaptureUnjoined");
  // The capture ended all the same: both streams run again.
  EXPECT_FALSE(emulation().capturing(main));
  EXPECT_FALSE(emulation().capturing(send));
  emulation().addToCounter(&counter, send);
  emulation().synchronize(send);
  EXPECT_EQ(loadWord(counter), 1u);

  // Joined back, then more work on the joined stream.
  beginCapture(main);
  emulation().recordEvent(ready, main);
  emulation().streamWaitEvent(send, ready);
  emulation().addToCounter(&counter, send);
  emulation().recordEvent(done, send);
  emulation().streamWaitEvent(main, done);
  emulation().addToCounter(&counter, send);
  expectUsageError([&] { endCapture(main); }, "after its last join back");

  // Joined back, then only an event recorded on the joined stream: nothing left unjoined.
  beginCapture(main);
  emulation().recordEvent(ready, main);
  emulation().streamWaitEvent(send, ready);
  emulation().addToCounter(&counter, send);
  emulation().recordEvent(done, send);
  emulation().streamWaitEvent(main, done);
  emulation().recordEvent(done, send);
  auto graph = endCapture(main);
  launchGraph(*graph, main);
  emulation().synchronize(main);
  EXPECT_EQ(loadWord(counter), 2u);
}

TEST(DeviceEmulatedCaptureTest, CaptureRulesOnEventsAndJoinedStreams) {
  Stream main, other, third;
  Event outside, inside, never;
  emulation().recordEvent(outside, other);
  emulation().synchronize(other);

  beginCapture(main);
  expectUsageError([&] { emulation().streamWaitEvent(main, outside); },
                   "an event recorded outside the capture");
  emulation().streamWaitEvent(main, never);  // CUDA: no wait, so nothing to capture
  emulation().recordEvent(inside, main);
  emulation().streamWaitEvent(other, inside);
  expectUsageError([&] { endCapture(other); }, "end it on the stream that began it");
  expectUsageError([&] { beginCapture(other); }, "already capturing");
  // A stream in one capture cannot wait on another capture's event.
  beginCapture(third);
  Event third_event;
  emulation().recordEvent(third_event, third);
  expectUsageError([&] { emulation().streamWaitEvent(main, third_event); },
                   "recorded in another graph capture");
  endCapture(third);
  Event joined;
  emulation().recordEvent(joined, other);
  emulation().streamWaitEvent(main, joined);
  auto graph = endCapture(main);
  EXPECT_EQ(graph->size(), 0u);

  // The capture's records are the graph's: waiting on one afterwards is refused.
  expectUsageError([&] { emulation().streamWaitEvent(other, inside); },
                   "recorded in a graph capture that has ended");
  launchGraph(*graph, main);
  emulation().synchronize(main);
}

}  // namespace
}  // namespace hoop::testing
