// Sets up a staged device connection (staged_connection.h) between ranks on different hosts:
// a TCP socket of its own, so that the host thread that drives it never shares a connection with
// the communicator's own calls, and the staging memory.
#pragma once

#include <functional>
#include <memory>

#include "base/clock.h"
#include "transport/cuda_ipc/device_call_queue.h"
#include "transport/device_staging/staged_connection.h"
#include "transport/setup_channel.h"
#include "transport/tcp/socket.h"
#include "transport/transport.h"

namespace hoop {

struct StagedLinkAddresses {
  SocketAddress own;   // where this rank listens for its peers (its port is not used)
  SocketAddress peer;  // where the peer does
};

// Both ranks call it at the same time. The lower rank listens on an ephemeral port of its own
// address and sends the port and a random token over `setup` (a channel both already trust);
// the higher one connects and presents the token, so a stranger that finds the port is refused.
std::unique_ptr<StagedDeviceConnection> connectStaged(const PeerPair& pair, SetupChannel& setup,
                                                      const StagedLinkAddresses& addresses,
                                                      size_t slots, size_t slotBytes,
                                                      DeviceCallQueue& queue,
                                                      Clock::time_point deadline,
                                                      const std::function<bool()>& aborted);

}  // namespace hoop
