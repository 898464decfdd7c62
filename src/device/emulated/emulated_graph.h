// Graph capture for the emulation, standing in for CUDA graphs in tests: the operations enqueued
// on a stream between beginCapture and endCapture are recorded instead of run, and launchGraph
// enqueues them again, in order, on any emulated stream, as many times as asked. Each operation is
// recorded as it was enqueued (the same pointers and values), as a CUDA graph's nodes are, so a
// replay reads and writes the same buffers and flags; addToCounter counts every replay.
//
// Emulation only: every stream here must come from the emulated runtime.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "device/device_runtime.h"
#include "device/emulated/emulated_stream.h"

namespace hoop::emulated {

class EmulatedGraph {
 public:
  explicit EmulatedGraph(std::vector<StreamOperation> operations)
      : operations_(std::move(operations)) {}

  size_t size() const { return operations_.size(); }
  const std::vector<StreamOperation>& operations() const { return operations_; }

 private:
  std::vector<StreamOperation> operations_;
};

// Starts recording `stream`; hoopInvalidUsage when it is already capturing. While it records,
// capturing(stream) is true and synchronize(stream) is hoopInvalidUsage.
void beginCapture(DeviceStream stream);
// Stops recording and returns what was recorded; hoopInvalidUsage when it was not capturing.
std::unique_ptr<EmulatedGraph> endCapture(DeviceStream stream);
// Enqueues the graph's operations on `stream`, after what is already there.
void launchGraph(const EmulatedGraph& graph, DeviceStream stream);

}  // namespace hoop::emulated
