#include "transport/rdma/rdma_transport.h"

#include "transport/rdma/rdma_setup.h"

namespace hoop {

std::string RdmaTransport::whyNot(const PeerPair& pair) const {
  return rdmaWhyNot(pair.selfRdma, pair.peerRdma, pair.sameHost, pair.named, pair.peerName);
}

std::unique_ptr<Connection> RdmaTransport::connect(const PeerPair& pair,
                                                   std::unique_ptr<Connection>& link,
                                                   SetupChannel& setup,
                                                   const TransportSettings& settings) {
  RdmaConnectRequest request;
  request.selfRank = pair.self;
  request.peerRank = pair.peer;
  request.peer = pair.peerName;
  request.jobTag = settings.jobTag;
  request.options = settings.rdma;
  request.registry = settings.registry;
  // The connection keeps the link: its closing is the quickest sign that the peer is gone.
  request.link = &link;
  return connectRdma(request, setup);
}

}  // namespace hoop
