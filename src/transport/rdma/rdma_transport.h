// RDMA over libibverbs (InfiniBand, RoCE): reliable-connected queue pairs per peer, set up over
// the pair's TCP link (rdma_setup.h), carrying data through registered slots and, for registered
// buffers, straight between the two ranks' memory (rdma_connection.h). Chosen between ranks on
// different hosts when both have a usable device on the same fabric; HOOP_TRANSPORT=rdma forces
// it, also within a host.
#pragma once

#include "transport/transport.h"

namespace hoop {

class RdmaTransport final : public Transport {
 public:
  std::string_view name() const override { return "rdma"; }
  // From the two ranks' RDMA summaries in the rendezvous table (rdma_reach.h).
  std::string whyNot(const PeerPair& pair) const override;
  bool explainsFallback() const override { return true; }
  std::unique_ptr<Connection> connect(const PeerPair& pair, std::unique_ptr<Connection>& link,
                                      SetupChannel& setup,
                                      const TransportSettings& settings) override;
};

}  // namespace hoop
