#include "device/emulated/emulated_stream.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "base/error.h"
#include "device/emulated/emulated_capture.h"

namespace hoop::emulated {

struct EmulatedStream::State {
  std::mutex mutex;
  std::condition_variable work;      // the thread waits here for operations, or for the end
  std::condition_variable finished;  // synchronize() waits here for `completed` to advance
  std::deque<StreamOperation> queue;
  uint64_t enqueued = 0;   // operations ever queued (not those recorded into a graph)
  uint64_t completed = 0;  // of those, run or skipped
  int waiters = 0;         // threads in synchronize(): the worker notifies only when there are any
  bool closed = false;     // the handle is gone: exit once the queue is empty
  std::optional<Error> error;
  // The capture the stream was last in; it has left it once the capture has ended (a joined
  // stream is not told: it finds out here, as the capture ends on another stream).
  std::optional<Membership> capture;

  // The capture the stream is in now; forgets an ended one. mutex held.
  std::optional<Membership>& liveCapture() {
    if (capture && capture->capture->ended()) capture.reset();
    return capture;
  }
};

namespace {

using State = EmulatedStream::State;

// Runs one operation; its failure becomes an Error whatever it threw.
std::optional<Error> runOperation(const StreamOperation& operation) {
  try {
    operation();
    return std::nullopt;
  } catch (const Error& error) {
    return Error(error.code(), str("emulated stream operation failed: ", error.what()));
  } catch (const std::exception& error) {
    return Error(hoopInternalError, str("emulated stream operation failed: ", error.what()));
  } catch (...) {
    return Error(hoopInternalError, "emulated stream operation failed: unknown exception");
  }
}

// The stream's thread. It holds a share of the state, so the state outlives a destroyed handle
// until the queue is drained.
void serve(std::shared_ptr<State> state) {
  for (;;) {
    StreamOperation operation;
    bool skip = false;
    {
      std::unique_lock lock(state->mutex);
      state->work.wait(lock, [&] { return !state->queue.empty() || state->closed; });
      if (state->queue.empty()) return;  // closed and drained
      operation = std::move(state->queue.front());
      state->queue.pop_front();
      skip = state->error.has_value();
    }
    std::optional<Error> error;
    if (!skip) error = runOperation(operation);
    // Let go of what the operation captured before reporting it done.
    operation = nullptr;
    std::lock_guard lock(state->mutex);
    if (error && !state->error) state->error = std::move(error);
    ++state->completed;
    if (state->waiters > 0) state->finished.notify_all();
  }
}

}  // namespace

DeviceStream EmulatedStream::create() {
  auto state = std::make_shared<State>();
  try {
    std::thread(serve, state).detach();
  } catch (const std::system_error& error) {
    fail(hoopSystemError, "starting the thread of an emulated stream: ", error.what());
  }
  return new EmulatedStream(std::move(state));
}

EmulatedStream& EmulatedStream::from(DeviceStream stream) {
  if (stream == nullptr) {
    fail(hoopInvalidArgument, "null stream: the emulated device runtime has no default stream");
  }
  return *static_cast<EmulatedStream*>(stream);
}

void EmulatedStream::destroy(DeviceStream stream) noexcept {
  if (stream == nullptr) return;
  auto* handle = static_cast<EmulatedStream*>(stream);
  {
    std::lock_guard lock(handle->state_->mutex);
    handle->state_->closed = true;
    // A capture without its origin can never end: its joined streams leave it now. A joined
    // stream going away leaves its branch behind, for endCapture to judge.
    if (auto& capture = handle->state_->liveCapture(); capture && capture->branch == 0) {
      capture->capture->abandon();
    }
    handle->state_->capture.reset();
  }
  handle->state_->work.notify_one();
  delete handle;
}

void EmulatedStream::enqueue(StreamOperation operation) {
  {
    std::lock_guard lock(state_->mutex);
    if (auto& capture = state_->liveCapture();
        capture && capture->capture->append(capture->branch, std::move(operation))) {
      return;
    }
    // append() leaves `operation` alone when the capture has just ended.
    state_->queue.push_back(std::move(operation));
    ++state_->enqueued;
  }
  state_->work.notify_one();
}

void EmulatedStream::synchronize() {
  std::unique_lock lock(state_->mutex);
  if (state_->liveCapture()) {
    fail(hoopInvalidUsage, "synchronize on an emulated stream that is being captured into a graph");
  }
  const uint64_t target = state_->enqueued;
  ++state_->waiters;
  state_->finished.wait(lock, [&] { return state_->completed >= target; });
  --state_->waiters;
  if (state_->error) throw *state_->error;
}

void EmulatedStream::beginCapture() {
  std::lock_guard lock(state_->mutex);
  if (state_->liveCapture())
    fail(hoopInvalidUsage, "beginCapture: the stream is already capturing");
  state_->capture = Membership{.capture = std::make_shared<Capture>(), .branch = 0};
}

CapturedGraph EmulatedStream::endCapture() {
  std::shared_ptr<Capture> capture;
  {
    std::lock_guard lock(state_->mutex);
    auto& live = state_->liveCapture();
    if (!live) fail(hoopInvalidUsage, "endCapture: the stream is not capturing");
    if (live->branch != 0) {
      fail(hoopInvalidUsage,
           "endCapture: the stream joined another stream's capture; end it on the stream that "
           "began it");
    }
    capture = std::move(live->capture);
    live.reset();
  }
  // The stream has left the capture even when finish() refuses it (an unjoined branch).
  return capture->finish();
}

void EmulatedStream::join(const std::shared_ptr<Capture>& capture, size_t signal) {
  std::lock_guard lock(state_->mutex);
  if (state_->liveCapture()) {
    fail(hoopInvalidUsage,
         "streamWaitEvent: the stream is capturing, and the event was recorded in another graph "
         "capture");
  }
  state_->capture = Membership{.capture = capture, .branch = capture->addBranch(signal)};
}

std::optional<EmulatedStream::Membership> EmulatedStream::membership() const {
  std::lock_guard lock(state_->mutex);
  return state_->liveCapture();
}

}  // namespace hoop::emulated
