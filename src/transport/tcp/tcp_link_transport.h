// TCP as a data transport: the pair's TCP link, which every pair has, carries the data itself.
// It reaches every peer, so it comes last in the order of preference and is always possible.
#pragma once

#include "transport/transport.h"

namespace hoop {

class TcpLinkTransport final : public Transport {
 public:
  std::string_view name() const override { return "tcp"; }
  std::string whyNot(const PeerPair& /*pair*/) const override { return {}; }
  bool carriesDataOnLink() const override { return true; }
  std::unique_ptr<Connection> connect(const PeerPair& /*pair*/, std::unique_ptr<Connection>& link,
                                      SetupChannel& /*setup*/,
                                      const TransportSettings& /*settings*/) override {
    return std::move(link);
  }
};

}  // namespace hoop
