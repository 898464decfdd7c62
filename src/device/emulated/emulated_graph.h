// Graph capture for the emulation, standing in for CUDA graphs in tests, with CUDA's multi-stream
// capture (emulated_capture.h): the operations enqueued between beginCapture and endCapture on the
// capturing stream, and on every stream that joined it through an event, are recorded instead of
// run, as branches with their fork and join edges. launchGraph replays them on any emulated
// stream, as many times as asked. Each operation is recorded as it was enqueued (the same
// pointers and values), as a CUDA graph's nodes are, so a replay reads and writes the same
// buffers and flags; addToCounter counts every replay.
//
// A replay runs the origin's branch on the stream it is launched on, and every other branch on a
// stream of the graph's own, so branches run concurrently as on a GPU, each replay with its own
// fork and join signals. The replay is one operation of the launch stream that ends only once
// every branch is done, so what the stream runs next sees all of the graph's work. A failure in
// any branch ends the replay (the other branches skip what is left) and becomes the launch
// stream's error; the graph's streams stay usable for the next replay.
//
// Unlike CUDA, replays of one graph launched on different streams are not ordered behind each
// other as a whole: each branch's replays run in launch order (one stream per branch), and the
// origin branches run on their launch streams.
//
// Emulation only: every stream here must come from the emulated runtime.
#pragma once

#include <cstddef>
#include <memory>

#include "device/device_runtime.h"
#include "device/emulated/emulated_capture.h"

namespace hoop::emulated {

class EmulatedGraph {
 public:
  // Starts one stream per branch beyond the origin's that has steps.
  explicit EmulatedGraph(CapturedGraph captured);
  EmulatedGraph(const EmulatedGraph&) = delete;
  EmulatedGraph& operator=(const EmulatedGraph&) = delete;

  // The operations recorded, in all branches.
  size_t size() const;
  // The branches a replay runs, the origin's included.
  size_t branches() const;
  // Enqueues one replay on `stream`, after what is already there. Destroying the graph with
  // replays in flight is safe: they hold what they run on.
  void launch(DeviceStream stream) const;

  struct Body;

 private:
  std::shared_ptr<const Body> body_;
};

// Starts recording `stream`; hoopInvalidUsage when it is already capturing. While it records,
// capturing(stream) is true and synchronize(stream) is hoopInvalidUsage, and so for every stream
// that joins it.
void beginCapture(DeviceStream stream);
// Stops recording and returns what was recorded; the streams that joined leave the capture too.
// hoopInvalidUsage when `stream` did not begin a capture, or when a stream that joined it has
// operations after its last join back (the capture ends all the same).
std::unique_ptr<EmulatedGraph> endCapture(DeviceStream stream);
// graph.launch(stream).
void launchGraph(const EmulatedGraph& graph, DeviceStream stream);

}  // namespace hoop::emulated
