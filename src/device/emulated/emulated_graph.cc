#include "device/emulated/emulated_graph.h"

#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "device/emulated/emulated_stream.h"

namespace hoop::emulated {
namespace {

// A stream the emulation owns. destroy() returns at once: the thread finishes what is queued.
class OwnedStream {
 public:
  OwnedStream() : stream_(EmulatedStream::create()) {}
  ~OwnedStream() { EmulatedStream::destroy(stream_); }
  OwnedStream(OwnedStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  OwnedStream& operator=(OwnedStream&&) = delete;

  EmulatedStream& get() const { return EmulatedStream::from(stream_); }

 private:
  DeviceStream stream_;
};

}  // namespace

// What a graph's replays run, shared by the graph and the replays in flight. The last holder
// may be a replay's operation on one of `streams` itself: destroying the stream from its own
// thread is safe, as the thread holds its own share of the stream's state.
struct EmulatedGraph::Body {
  CapturedGraph captured;
  std::vector<OwnedStream> streams;  // branch b > 0 runs on streams[b - 1]
};

namespace {

using Body = EmulatedGraph::Body;

// One replay: its own signals, so two replays in flight never see each other's, and its first
// failure.
class Replay : public std::enable_shared_from_this<Replay> {
 public:
  explicit Replay(std::shared_ptr<const Body> body)
      : body_(std::move(body)),
        signals_(std::make_unique<std::atomic<uint32_t>[]>(body_->captured.signals)) {}

  // On the launch stream: starts the other branches, then runs the origin's. Throws the
  // replay's failure, which the launch stream keeps as its error.
  void runOrigin() {
    const auto& branches = body_->captured.branches;
    for (size_t b = 1; b < branches.size(); ++b) {
      body_->streams[b - 1].get().enqueue([self = shared_from_this(), b] { self->runBranch(b); });
    }
    try {
      runSteps(0);
    } catch (...) {
      fail(std::current_exception());
      throw;
    }
  }

 private:
  // On a graph's stream: a failure is the replay's, never the stream's, which the next replay
  // uses too.
  void runBranch(size_t b) noexcept {
    try {
      runSteps(b);
    } catch (...) {
      fail(std::current_exception());
    }
  }

  void runSteps(size_t b) {
    for (const GraphStep& step : body_->captured.branches[b]) {
      // The rest of a failed replay is skipped, as a stream skips what follows its error.
      throwIfFailed();
      switch (step.kind) {
        case GraphStep::Kind::kRun: step.operation(); break;
        case GraphStep::Kind::kSignal: release(signals_[step.signal]); break;
        case GraphStep::Kind::kWait: {
          // Acquire: what the signalling branch wrote before the signal is visible after it.
          std::atomic<uint32_t>& signal = signals_[step.signal];
          while (signal.load(std::memory_order_acquire) == 0) {
            signal.wait(0, std::memory_order_acquire);
          }
          break;
        }
      }
    }
    throwIfFailed();
  }

  static void release(std::atomic<uint32_t>& signal) {
    signal.store(1, std::memory_order_release);
    signal.notify_all();
  }

  // Keeps the first failure and releases every signal, so no branch waits for one that a failed
  // branch will never give; each then finds the failure and stops.
  void fail(std::exception_ptr error) noexcept {
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::move(error);
    }
    failed_.store(true, std::memory_order_release);
    for (size_t s = 0; s < body_->captured.signals; ++s) release(signals_[s]);
  }

  void throwIfFailed() {
    if (!failed_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    std::rethrow_exception(error_);
  }

  const std::shared_ptr<const Body> body_;
  const std::unique_ptr<std::atomic<uint32_t>[]> signals_;  // by signal number: 0, then 1
  std::atomic<bool> failed_{false};
  std::mutex mutex_;
  std::exception_ptr error_;
};

}  // namespace

EmulatedGraph::EmulatedGraph(CapturedGraph captured) {
  auto body = std::make_shared<Body>();
  body->captured.signals = captured.signals;
  // A branch left empty (a stream that joined and did nothing) needs no stream: signals are
  // numbered by the capture, not by branch, so dropping it changes no edge.
  for (size_t b = 0; b < captured.branches.size(); ++b) {
    if (b > 0 && captured.branches[b].empty()) continue;
    body->captured.branches.push_back(std::move(captured.branches[b]));
    if (b > 0) body->streams.emplace_back();
  }
  body_ = std::move(body);
}

size_t EmulatedGraph::size() const {
  size_t operations = 0;
  for (const GraphBranch& branch : body_->captured.branches) {
    for (const GraphStep& step : branch) operations += step.kind == GraphStep::Kind::kRun;
  }
  return operations;
}

size_t EmulatedGraph::branches() const { return body_->captured.branches.size(); }

void EmulatedGraph::launch(DeviceStream stream) const {
  // The replay's signals are made when the launch stream reaches it, not here: a launch captured
  // into another graph is then a fresh replay each time that graph is replayed.
  EmulatedStream::from(stream).enqueue(
      [body = body_] { std::make_shared<Replay>(body)->runOrigin(); });
}

void beginCapture(DeviceStream stream) { EmulatedStream::from(stream).beginCapture(); }

std::unique_ptr<EmulatedGraph> endCapture(DeviceStream stream) {
  return std::make_unique<EmulatedGraph>(EmulatedStream::from(stream).endCapture());
}

void launchGraph(const EmulatedGraph& graph, DeviceStream stream) { graph.launch(stream); }

}  // namespace hoop::emulated
