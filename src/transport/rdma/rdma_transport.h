// RDMA over libibverbs. Registered so that HOOP_TRANSPORT accepts the name and the choice can say
// why it was passed over; this build has no RDMA data path, so it reaches no peer.
#pragma once

#include "transport/transport.h"

namespace hoop {

class RdmaTransport final : public Transport {
 public:
  std::string_view name() const override { return "rdma"; }
  std::string whyNot(const PeerPair& /*pair*/) const override {
    return "rdma is not available in this build of hoop yet";
  }
  std::unique_ptr<Connection> connect(const PeerPair& pair, std::unique_ptr<Connection>& link,
                                      SetupChannel& setup,
                                      const TransportSettings& settings) override;
};

}  // namespace hoop
