#include "transport/rdma/rdma_transport.h"

#include "base/error.h"

namespace hoop {

std::unique_ptr<Connection> RdmaTransport::connect(const PeerPair& pair,
                                                   std::unique_ptr<Connection>& /*link*/,
                                                   SetupChannel& /*setup*/,
                                                   const TransportSettings& /*settings*/) {
  // chooseTransport never picks a transport whose whyNot() is not empty.
  fail(hoopInternalError, "rdma chosen for ", pair.peerName, ", but ", whyNot(pair));
}

}  // namespace hoop
