// broadcastParameters: make every rank start from root's parameters.
#include <optional>
#include <vector>

#include "hoop/train.hpp"

namespace hoop::train {

void broadcastParameters(Engine& engine, std::span<const NamedBuffer> buffers, int root) {
  std::vector<Engine::Handle> handles;
  handles.reserve(buffers.size());
  for (const NamedBuffer& buffer : buffers) {
    handles.push_back(engine.broadcast(buffer.name, buffer.data, buffer.count, buffer.type, root));
  }
  std::optional<Exception> firstFailure;
  for (Engine::Handle handle : handles) {
    try {
      engine.wait(handle);
    } catch (const Exception& e) {
      if (!firstFailure) firstFailure = e;
    }
  }
  if (firstFailure) throw *firstFailure;
}

void broadcastParameters(hoopComm_t comm, std::span<const NamedBuffer> buffers, int root) {
  // Without an engine there is no negotiation: every rank must pass the same list in the same
  // order, as with any sequence of collectives.
  for (const NamedBuffer& buffer : buffers) {
    const hoopResult_t result =
        hoopBroadcast(buffer.data, buffer.data, buffer.count, buffer.type, root, comm, nullptr);
    if (result != hoopSuccess) {
      throw Exception(result, "broadcastParameters: broadcast of '" + buffer.name + "' from root " +
                                  std::to_string(root) + " failed: " + hoopGetLastError(comm));
    }
  }
}

}  // namespace hoop::train
