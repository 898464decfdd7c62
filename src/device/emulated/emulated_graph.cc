#include "device/emulated/emulated_graph.h"

namespace hoop::emulated {

void beginCapture(DeviceStream stream) { EmulatedStream::from(stream).beginCapture(); }

std::unique_ptr<EmulatedGraph> endCapture(DeviceStream stream) {
  return std::make_unique<EmulatedGraph>(EmulatedStream::from(stream).endCapture());
}

void launchGraph(const EmulatedGraph& graph, DeviceStream stream) {
  EmulatedStream& target = EmulatedStream::from(stream);
  for (const StreamOperation& operation : graph.operations()) target.enqueue(operation);
}

}  // namespace hoop::emulated
