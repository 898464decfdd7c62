// A blocking, reliable, small-message exchange with one peer while a connection is set up: how
// two ranks trade segment names, queue pair numbers or keys before their data path exists. hoop
// passes one carried by the pair's TCP link and driven by the communicator's wait loop, so it
// honours the init deadline and hoopCommAbort.
#pragma once

#include <cstddef>

namespace hoop {

class SetupChannel {
 public:
  virtual ~SetupChannel() = default;
  // Both throw hoop::Error on failure or timeout.
  virtual void send(const void* data, size_t bytes) = 0;
  virtual void recv(void* data, size_t bytes) = 0;
};

}  // namespace hoop
