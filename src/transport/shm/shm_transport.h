// Shared memory between ranks on one host: segments both processes map, set up over the pair's
// TCP link (shm_setup.h).
#pragma once

#include "transport/transport.h"

namespace hoop {

class ShmTransport final : public Transport {
 public:
  std::string_view name() const override { return "shm"; }
  std::string whyNot(const PeerPair& pair) const override;
  bool sharesMemory() const override { return true; }
  std::unique_ptr<Connection> connect(const PeerPair& pair, std::unique_ptr<Connection>& link,
                                      SetupChannel& setup,
                                      const TransportSettings& settings) override;
};

}  // namespace hoop
