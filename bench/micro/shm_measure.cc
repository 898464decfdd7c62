// Not a test: one-way latency (8 B ping-pong) and streaming bandwidth (1 MiB, 16 MiB messages,
// with and without CMA) between two processes over ShmConnection, pinned to CPUs 0 and 1, then
// exchanges of 16-256 KiB each way with every message at its slot's start and spread along the
// slot (ShmOptions::spreadBytes). Prints medians.
//   ninja hoop_shm_measure && bench/micro/hoop_shm_measure [reps]
#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "shm_test_util.h"

namespace hoop::test {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

// Rank `self` (0: this process, 1: the forked child) pinned to core `self`, connected twice to the
// other rank: one connection per option set, in the same order on both sides.
std::array<std::unique_ptr<ShmConnection>, 2> pinAndConnect(int self, SocketSetupChannel& channel,
                                                            const ShmOptions& first,
                                                            const ShmOptions& second) {
  pinTo(self);
  const int peer = 1 - self;
  const std::string name = "rank " + std::to_string(peer);
  return {connectShm(self, peer, name, channel, first),
          connectShm(self, peer, name, channel, second)};
}

void spinUntilIdle(Connection& connection) {
  while (!connection.idle()) connection.progress();
}

// Parent sends first; a round trip is two one-way trips.
double pingPongOneWayMicros(ShmConnection& connection, bool first, int iterations) {
  uint64_t out = 1;
  uint64_t in = 0;
  auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    FrameTag tag{OpKind::kSendRecv, static_cast<uint32_t>(i)};
    if (first) {
      connection.postSend(&out, 8, tag);
      connection.postRecv(&in, 8, tag);
    } else {
      connection.postRecv(&in, 8, tag);
      spinUntilIdle(connection);
      connection.postSend(&out, 8, tag);
    }
    spinUntilIdle(connection);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations / 2;
}

// The child streams `count` messages of `bytes`, at most `window` in flight; the parent
// receives and times it. GB/s.
void streamSend(ShmConnection& connection, size_t bytes, size_t count, size_t window) {
  std::vector<uint8_t> data(bytes, 1);
  for (size_t m = 0; m < count; ++m) {
    while (connection.sendsPosted() - connection.sendsCompleted() >= window) connection.progress();
    connection.postSend(data.data(), bytes, {OpKind::kAllReduce, static_cast<uint32_t>(m)});
  }
  spinUntilIdle(connection);
}
double streamRecv(ShmConnection& connection, size_t bytes, size_t count, size_t window) {
  std::vector<std::vector<uint8_t>> buffers(window, std::vector<uint8_t>(bytes, 0));
  auto start = Clock::now();
  for (size_t m = 0; m < count; ++m) {
    while (connection.recvsPosted() - connection.recvsCompleted() >= window) connection.progress();
    connection.postRecv(buffers[m % window].data(), bytes,
                        {OpKind::kAllReduce, static_cast<uint32_t>(m)});
  }
  spinUntilIdle(connection);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(bytes * count) / seconds / 1e9;
}

// Both directions at once, as in a ring step: each side streams `count` messages to the other.
// GB/s per direction.
double streamBoth(ShmConnection& connection, size_t bytes, size_t count, size_t window) {
  std::vector<uint8_t> out(bytes, 1);
  std::vector<std::vector<uint8_t>> in(window, std::vector<uint8_t>(bytes, 0));
  auto start = Clock::now();
  size_t sent = 0;
  size_t received = 0;
  while (sent < count || received < count || !connection.idle()) {
    if (sent < count && connection.sendsPosted() - connection.sendsCompleted() < window) {
      connection.postSend(out.data(), bytes, {OpKind::kAllGather, static_cast<uint32_t>(sent++)});
    }
    if (received < count && connection.recvsPosted() - connection.recvsCompleted() < window) {
      connection.postRecv(in[received % window].data(), bytes,
                          {OpKind::kAllGather, static_cast<uint32_t>(received)});
      ++received;
    }
    connection.progress();
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(bytes * count) / seconds / 1e9;
}

struct StreamCase {
  size_t bytes;
  size_t count;
  size_t window;
};

double memcpyGBs(size_t bytes, size_t count) {
  std::vector<uint8_t> from(bytes, 1);
  std::vector<uint8_t> to(bytes, 0);
  auto start = Clock::now();
  for (size_t i = 0; i < count; ++i) {
    from[i % bytes] = static_cast<uint8_t>(i);
    std::memcpy(to.data(), from.data(), bytes);
  }
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(bytes * count) / seconds / 1e9;
}

// Lets the child leave its last wait and joins it; false (reported) when it failed.
bool finishChild(ForkedChild& child) {
  child.channel().sendU64(1);
  ChildResult result = child.join(std::chrono::seconds(120));
  if (result.status != 0) std::fprintf(stderr, "child failed: %s\n", result.report.c_str());
  return result.status == 0;
}

// One exchange per round, as in a 2-rank recursive doubling step: each side sends `bytes` and
// reads the peer's message where it lies (every 8-byte word, as a reduction would). Microseconds
// per round.
double exchangeMicros(ShmConnection& connection, size_t bytes, int rounds) {
  std::vector<uint64_t> out(bytes / 8, 1);
  uint64_t sum = 0;
  auto start = Clock::now();
  for (int i = 0; i < rounds; ++i) {
    FrameTag tag{OpKind::kAllReduce, static_cast<uint32_t>(i)};
    connection.postSend(out.data(), bytes, tag);
    const uint64_t* in = nullptr;
    while ((in = static_cast<const uint64_t*>(connection.peekRecv(bytes, tag))) == nullptr) {
      connection.progress();
    }
    for (size_t w = 0; w < bytes / 8; ++w) sum += in[w];
    connection.releasePeeked();
    spinUntilIdle(connection);
  }
  const double micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  if (sum != static_cast<uint64_t>(rounds) * (bytes / 8)) std::printf("exchange: wrong data\n");
  return micros / rounds;
}

// Exchanges through two slots-only connections, one with every message at its slot's start and
// one spreading them along the slot, measured in alternation.
int runExchanges(int reps) {
  const std::vector<size_t> sizes = {16 << 10, 64 << 10, 128 << 10, 256 << 10};
  constexpr int kRounds = 2000;
  ShmOptions atStart;
  atStart.useCma = false;
  ShmOptions spread = atStart;
  spread.spreadBytes = spread.slotBytes;
  ForkedChild child([&](SocketSetupChannel& channel) {
    auto [first, second] = pinAndConnect(1, channel, atStart, spread);
    for (int r = 0; r < reps; ++r) {
      for (ShmConnection* connection : {first.get(), second.get()}) {
        for (size_t bytes : sizes) {
          channel.recvU64();
          exchangeMicros(*connection, bytes, kRounds);
        }
      }
    }
    channel.recvU64();
  });
  auto [first, second] = pinAndConnect(0, child.channel(), atStart, spread);
  std::vector<std::vector<std::vector<double>>> micros(
      2, std::vector<std::vector<double>>(sizes.size()));
  for (int r = 0; r < reps; ++r) {
    int mode = 0;
    for (ShmConnection* connection : {first.get(), second.get()}) {
      for (size_t i = 0; i < sizes.size(); ++i) {
        child.channel().sendU64(1);
        micros[mode][i].push_back(exchangeMicros(*connection, sizes[i], kRounds));
      }
      ++mode;
    }
  }
  if (!finishChild(child)) return 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::printf(
        "exchange %4zu KiB each way: at the slot's start %7.2f us, spread %7.2f us "
        "(medians of %d, %d rounds each)\n",
        sizes[i] >> 10, median(micros[0][i]), median(micros[1][i]), reps, kRounds);
  }
  return 0;
}

// Two connections, CMA on and off, measured in alternation: on a shared, noisy machine both
// paths then see the same noise, and the medians compare.
int run(int reps) {
  const std::vector<StreamCase> streams = {{1 << 20, 512, 8}, {16 << 20, 32, 2}};
  constexpr int kRoundTrips = 20000;
  ShmOptions cma;
  ShmOptions slots;
  slots.useCma = false;
  ForkedChild child([&](SocketSetupChannel& channel) {
    auto [withCma, slotsOnly] = pinAndConnect(1, channel, cma, slots);
    for (int r = 0; r < reps; ++r) {
      for (ShmConnection* connection : {withCma.get(), slotsOnly.get()}) {
        channel.recvU64();
        pingPongOneWayMicros(*connection, false, kRoundTrips);
        for (const StreamCase& s : streams) {
          channel.recvU64();
          streamSend(*connection, s.bytes, s.count, s.window);
          channel.recvU64();
          streamBoth(*connection, s.bytes, s.count, s.window);
        }
      }
    }
    channel.recvU64();
  });
  auto [withCma, slotsOnly] = pinAndConnect(0, child.channel(), cma, slots);
  if (!withCma->recvsViaCma()) std::printf("note: CMA refused here, both rows are slots\n");
  // [path][0]: latency, [path][1 + 2i]: stream i one way, [path][2 + 2i]: both ways
  std::vector<std::vector<std::vector<double>>> results(
      2, std::vector<std::vector<double>>(1 + 2 * streams.size()));
  std::vector<std::vector<double>> copies(streams.size());
  for (int r = 0; r < reps; ++r) {
    int path = 0;
    for (ShmConnection* connection : {withCma.get(), slotsOnly.get()}) {
      child.channel().sendU64(1);
      results[path][0].push_back(pingPongOneWayMicros(*connection, true, kRoundTrips));
      for (size_t i = 0; i < streams.size(); ++i) {
        child.channel().sendU64(1);
        results[path][1 + 2 * i].push_back(
            streamRecv(*connection, streams[i].bytes, streams[i].count, streams[i].window));
        child.channel().sendU64(1);
        results[path][2 + 2 * i].push_back(
            streamBoth(*connection, streams[i].bytes, streams[i].count, streams[i].window));
      }
      ++path;
    }
    for (size_t i = 0; i < streams.size(); ++i) {
      copies[i].push_back(memcpyGBs(streams[i].bytes, streams[i].count / 2));
    }
  }
  if (!finishChild(child)) return 1;
  std::printf("medians of %d alternating runs (min..max)\n", reps);
  const char* names[2] = {"cma", "slots-only"};
  for (int path = 0; path < 2; ++path) {
    const auto& latency = results[path][0];
    std::printf("%-10s 8 B one-way latency %7.3f us (%.3f..%.3f), %d round trips each\n",
                names[path], median(latency), *std::min_element(latency.begin(), latency.end()),
                *std::max_element(latency.begin(), latency.end()), kRoundTrips);
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    for (int both = 0; both < 2; ++both) {
      for (int path = 0; path < 2; ++path) {
        const auto& bandwidth = results[path][1 + 2 * i + both];
        std::printf("%-10s %5zu KiB %s %6.2f GB/s (%.2f..%.2f), %zu messages, %zu in flight\n",
                    names[path], streams[i].bytes >> 10,
                    both ? "both ways, each" : "one way        ", median(bandwidth),
                    *std::min_element(bandwidth.begin(), bandwidth.end()),
                    *std::max_element(bandwidth.begin(), bandwidth.end()), streams[i].count,
                    streams[i].window);
      }
    }
    std::printf("%-10s %5zu KiB memcpy          %6.2f GB/s (one thread, for scale)\n", "",
                streams[i].bytes >> 10, median(copies[i]));
  }
  return 0;
}

}  // namespace
}  // namespace hoop::test

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 7;
  try {
    const int status = hoop::test::run(reps);
    return status != 0 ? status : hoop::test::runExchanges(reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
