// hoop-micro-tcp: latency and bandwidth of the TCP transport over loopback, inside one process,
// beside plain sockets doing the same exchanges, so the table shows what hoop adds to the kernel.
//
// pingpong/<variant>/<bytes>: one message each way per iteration. Time is the round trip;
//   the one_way counter is half of it (the usual "latency").
// stream/<variant>/<bytes>: per iteration, kWindow messages in one direction, all posted at
//   once, then an 8-byte acknowledgement back (osu_bw's scheme), so the time covers delivery,
//   not just handing the bytes to the kernel. bytes_per_second counts payload only.
//
// Variants:
//   hoop_1stream, hoop_2streams  TcpConnection pairs from two TcpTransports (1 or 2 sockets per
//                                connection); both ends busy-poll progress(), as a collective's
//                                wait loop does while data moves.
//   raw_blocking                 blocking send/recv on one TCP_NODELAY socket pair: the floor the
//                                brief asks for. Each side sleeps in the kernel between messages,
//                                so small-message latency includes two thread wake-ups.
//   raw_spin                     the same sockets polled with MSG_DONTWAIT: the same waiting
//                                strategy as hoop, so hoop minus raw_spin is hoop's own cost.
//
// The benchmark thread drives one end; a PeerThread drives the other. Each benchmark run builds
// a fresh pair, so no run sees another's leftovers. All times are wall-clock (UseRealTime): the
// peer thread's work and any sleeping are part of what is measured.
#include <benchmark/benchmark.h>
#include <sys/socket.h>

#include <array>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "base/types.h"
#include "loopback_pair.h"
#include "peer_thread.h"
#include "spin_wait.h"
#include "transport/connection.h"

namespace hoop::micro {
namespace {

constexpr FrameTag kTag{OpKind::kSendRecv, 0};
constexpr size_t kWindow = 16;  // streaming: messages in flight per iteration
constexpr size_t kAckBytes = 8;

constexpr std::array<size_t, 6> kPingPongSizes = {8, 64, 512, 4 << 10, 32 << 10, 64 << 10};
constexpr std::array<size_t, 4> kStreamSizes = {64 << 10, 256 << 10, 1 << 20, 4 << 20};

// Busy-polls the connection until `done`; false as soon as `giveUp` (the other thread failed or
// asked to stop). Never sleeps (see SpinWait): a wake-up would cost more than the messages
// measured here.
template <typename Done, typename GiveUp>
bool spinUntil(Connection& c, Done done, GiveUp giveUp) {
  SpinWait wait;
  while (!done()) {
    wait.afterPoll(c.progress());
    if (giveUp()) return false;
  }
  return true;
}

// One-way latency in seconds: wall time / (2 x iterations).
void reportOneWay(benchmark::State& state) {
  state.counters["one_way"] = benchmark::Counter(
      2, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void reportStreamed(benchmark::State& state, size_t bytes) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * kWindow * bytes));
}

// Runs `body`, turning an exception (setup failed, connection lost) into a skipped benchmark
// with the reason instead of an aborted program.
template <typename Body>
void guarded(benchmark::State& state, Body body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void skipForPeer(benchmark::State& state, const PeerThread& peer) {
  state.SkipWithError(peer.failed() ? ("peer thread: " + peer.error()).c_str()
                                    : "the peer thread stopped answering");
}

// ---- hoop TcpConnection ----

void hoopPingPong(benchmark::State& state, int streams, size_t bytes) {
  guarded(state, [&] {
    HoopPair pair = connectHoopPair(streams);
    PeerThread peer([&c = *pair.rank1, bytes](PeerThread& self) {
      std::vector<char> in(bytes), out(bytes);
      while (true) {
        c.postRecv(in.data(), bytes, kTag);
        if (!spinUntil(
                c, [&] { return c.recvsCompleted() == c.recvsPosted(); },
                [&] { return self.stopRequested(); })) {
          return;
        }
        // The reply goes out in the progress() calls that wait for the next ping.
        c.postSend(out.data(), bytes, kTag);
      }
    });
    TcpConnection& c = *pair.rank0;
    std::vector<char> out(bytes), in(bytes);
    for (auto _ : state) {
      c.postSend(out.data(), bytes, kTag);
      c.postRecv(in.data(), bytes, kTag);
      if (!spinUntil(
              c, [&] { return c.idle(); }, [&] { return peer.failed(); })) {
        skipForPeer(state, peer);
        break;
      }
    }
    reportOneWay(state);
  });
}

void hoopStream(benchmark::State& state, int streams, size_t bytes) {
  guarded(state, [&] {
    HoopPair pair = connectHoopPair(streams);
    PeerThread peer([&c = *pair.rank1, bytes](PeerThread& self) {
      std::vector<char> in(bytes);
      std::array<char, kAckBytes> ack{};
      while (true) {
        // Every message of the window lands in the same buffer, as the sender sends from one.
        for (size_t i = 0; i < kWindow; ++i) c.postRecv(in.data(), bytes, kTag);
        if (!spinUntil(
                c, [&] { return c.recvsCompleted() == c.recvsPosted(); },
                [&] { return self.stopRequested(); })) {
          return;
        }
        c.postSend(ack.data(), ack.size(), kTag);
      }
    });
    TcpConnection& c = *pair.rank0;
    std::vector<char> out(bytes);
    std::array<char, kAckBytes> ack{};
    for (auto _ : state) {
      for (size_t i = 0; i < kWindow; ++i) c.postSend(out.data(), bytes, kTag);
      c.postRecv(ack.data(), ack.size(), kTag);
      if (!spinUntil(
              c, [&] { return c.idle(); }, [&] { return peer.failed(); })) {
        skipForPeer(state, peer);
        break;
      }
    }
    reportStreamed(state, bytes);
  });
}

// ---- plain sockets ----

// The peer's loop ends when the benchmark thread shuts its end down (the wake hook below): the
// blocking receive then returns end-of-file. The peer shuts its own end on the way out, so a
// benchmark thread still waiting for a reply gets end-of-file too instead of hanging.
PeerThread rawPeer(RawPair& pair, std::function<void(int fd)> serve) {
  return PeerThread(
      [fd = pair.far.get(), serve = std::move(serve)](PeerThread&) {
        serve(fd);
        ::shutdown(fd, SHUT_RDWR);
      },
      [fd = pair.near.get()] { ::shutdown(fd, SHUT_RDWR); });
}

void rawPingPong(benchmark::State& state, bool spin, size_t bytes) {
  guarded(state, [&] {
    RawPair pair = connectRawPair();
    PeerThread peer = rawPeer(pair, [bytes, spin](int fd) {
      std::vector<char> buffer(bytes);
      while (recvFull(fd, buffer.data(), bytes, spin) && sendFull(fd, buffer.data(), bytes, spin)) {
      }
    });
    const int fd = pair.near.get();
    std::vector<char> out(bytes), in(bytes);
    for (auto _ : state) {
      if (!sendFull(fd, out.data(), bytes, spin) || !recvFull(fd, in.data(), bytes, spin)) {
        skipForPeer(state, peer);
        break;
      }
    }
    reportOneWay(state);
  });
}

void rawStream(benchmark::State& state, bool spin, size_t bytes) {
  guarded(state, [&] {
    RawPair pair = connectRawPair();
    PeerThread peer = rawPeer(pair, [bytes, spin](int fd) {
      std::vector<char> in(bytes);
      std::array<char, kAckBytes> ack{};
      while (true) {
        for (size_t i = 0; i < kWindow; ++i) {
          if (!recvFull(fd, in.data(), bytes, spin)) return;
        }
        if (!sendFull(fd, ack.data(), ack.size(), spin)) return;
      }
    });
    const int fd = pair.near.get();
    std::vector<char> out(bytes);
    std::array<char, kAckBytes> ack{};
    for (auto _ : state) {
      bool ok = true;
      for (size_t i = 0; i < kWindow && ok; ++i) ok = sendFull(fd, out.data(), bytes, spin);
      if (!ok || !recvFull(fd, ack.data(), ack.size(), spin)) {
        skipForPeer(state, peer);
        break;
      }
    }
    reportStreamed(state, bytes);
  });
}

// ---- registration ----

enum class Variant { kRawBlocking, kRawSpin, kHoop1Stream, kHoop2Streams };
constexpr std::array<Variant, 4> kVariants = {Variant::kRawBlocking, Variant::kRawSpin,
                                              Variant::kHoop1Stream, Variant::kHoop2Streams};

const char* variantName(Variant v) {
  switch (v) {
    case Variant::kRawBlocking: return "raw_blocking";
    case Variant::kRawSpin: return "raw_spin";
    case Variant::kHoop1Stream: return "hoop_1stream";
    case Variant::kHoop2Streams: return "hoop_2streams";
  }
  return "?";
}

void registerAll() {
  for (Variant v : kVariants) {
    for (size_t bytes : kPingPongSizes) {
      const std::string name =
          std::string("pingpong/") + variantName(v) + "/" + std::to_string(bytes);
      auto run = [v, bytes](benchmark::State& state) {
        switch (v) {
          case Variant::kRawBlocking: return rawPingPong(state, false, bytes);
          case Variant::kRawSpin: return rawPingPong(state, true, bytes);
          case Variant::kHoop1Stream: return hoopPingPong(state, 1, bytes);
          case Variant::kHoop2Streams: return hoopPingPong(state, 2, bytes);
        }
      };
      benchmark::RegisterBenchmark(name.c_str(), run)->UseRealTime();
    }
  }
  for (Variant v : kVariants) {
    for (size_t bytes : kStreamSizes) {
      const std::string name =
          std::string("stream/") + variantName(v) + "/" + std::to_string(bytes);
      auto run = [v, bytes](benchmark::State& state) {
        switch (v) {
          case Variant::kRawBlocking: return rawStream(state, false, bytes);
          case Variant::kRawSpin: return rawStream(state, true, bytes);
          case Variant::kHoop1Stream: return hoopStream(state, 1, bytes);
          case Variant::kHoop2Streams: return hoopStream(state, 2, bytes);
        }
      };
      benchmark::RegisterBenchmark(name.c_str(), run)->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace hoop::micro

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("hoop_stream_window", std::to_string(hoop::micro::kWindow));
  hoop::micro::registerAll();
  // A filter that matches nothing is a mistake (a renamed benchmark, a CTest smoke run testing
  // nothing): fail instead of printing an empty table.
  if (benchmark::RunSpecifiedBenchmarks() == 0) return 1;
  benchmark::Shutdown();
  return 0;
}
