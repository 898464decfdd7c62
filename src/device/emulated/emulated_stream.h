// An emulated stream: a thread that runs the operations enqueued on it one at a time, in the order
// they were enqueued, as a CUDA stream runs its work. Enqueueing never waits for the thread.
//
// Errors: an operation that throws gives the stream a sticky error, as a faulting kernel does on
// CUDA: every later operation is skipped (a flag written after a failed reduction would tell a
// peer that garbage is ready), and synchronize() throws the error from then on.
//
// Lifetime: the handle (what DeviceStream points to) and the thread share the stream's state.
// destroy() only lets go of the handle's share and returns at once; the thread finishes what is
// queued, exits, and frees the state. A thread stuck forever (on a flag nobody sets) is left
// behind until the process exits; it touches only its own state and the operations' memory.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "device/device_runtime.h"

namespace hoop::emulated {

// One stream-ordered operation. Copyable, so a captured graph can be replayed many times.
using StreamOperation = std::function<void()>;

class Capture;
struct CapturedGraph;

class EmulatedStream {
 public:
  // A new stream with its thread running. hoopSystemError when no thread can be started.
  static DeviceStream create();
  // The stream behind a handle create() returned; hoopInvalidArgument for null (the emulation
  // has no default stream).
  static EmulatedStream& from(DeviceStream stream);
  // Ends the handle; the thread frees the rest once the queue is empty. Null: nothing.
  static void destroy(DeviceStream stream) noexcept;

  // Queues `operation` to run after everything enqueued before it, or records it into the graph
  // being captured.
  void enqueue(StreamOperation operation);
  // Blocks until everything enqueued so far has run; throws the stream's error, if any.
  // hoopInvalidUsage while capturing (CUDA forbids it too: it would never return).
  void synchronize();

  // Graph capture (emulated_graph.h, emulated_capture.h). While the stream is in a capture,
  // enqueue() records into its branch instead of queueing. It is in one from beginCapture (as the
  // origin, branch 0) or from joining another stream's capture, until that capture ends.
  struct Membership {
    std::shared_ptr<Capture> capture = nullptr;
    size_t branch = 0;
  };
  // hoopInvalidUsage when the stream is already in a capture.
  void beginCapture();
  // Ends the capture this stream began: the stream and every stream that joined it leave it.
  // hoopInvalidUsage when the stream is in no capture, or joined one rather than began it.
  CapturedGraph endCapture();
  // Joins `capture` as a new branch that starts after `signal`; hoopInvalidUsage when the stream
  // is in another capture (CUDA does not merge two captures).
  void join(const std::shared_ptr<Capture>& capture, size_t signal);
  // The capture the stream is in, if any.
  std::optional<Membership> membership() const;
  bool capturing() const { return membership().has_value(); }

  struct State;

 private:
  explicit EmulatedStream(std::shared_ptr<State> state) : state_(std::move(state)) {}

  std::shared_ptr<State> state_;
};

}  // namespace hoop::emulated
