// A test-only transport: each pair of ranks on one host talks through two named pipes (FIFOs).
// It exists to show that a transport registered from outside src/ carries hoop's collectives
// with no edit to the communicator, the schedules or the tuner: it is found by name through
// the registry, chosen by HOOP_TRANSPORT, connected over the pair's TCP link, and driven by the
// communicator's wait loop like shm and tcp.
#pragma once

#include <atomic>

#include "transport/transport.h"

namespace hoop::test {

class LoopbackPipeTransport final : public Transport {
 public:
  std::string_view name() const override { return "pipe"; }
  std::string whyNot(const PeerPair& pair) const override;
  std::unique_ptr<Connection> connect(const PeerPair& pair, std::unique_ptr<Connection>& link,
                                      SetupChannel& setup,
                                      const TransportSettings& settings) override;

  // How many connections it has built in this process (each rank of a pair counts its own).
  int connectionsMade() const { return connectionsMade_.load(); }

 private:
  std::atomic<int> connectionsMade_{0};
};

}  // namespace hoop::test
