// Which transport carries traffic to each peer, and how HOOP_TRANSPORT steers it.
#pragma once

#include <string>
#include <string_view>

namespace hoop {

enum class TransportKind { kShm, kTcp, kRdma };

// "shm", "tcp", "rdma": the names HOOP_TRANSPORT and messages use.
const char* transportName(TransportKind kind);

// The transports a user allows. HOOP_TRANSPORT holds a comma list: "tcp" forces TCP, "shm,tcp"
// allows only those two, a leading ^ excludes instead ("^shm": everything but shared memory).
// Unset or empty allows everything.
class TransportPolicy {
 public:
  TransportPolicy() = default;
  // Throws hoopInvalidArgument naming HOOP_TRANSPORT for an unknown name.
  static TransportPolicy parse(std::string_view text);
  static TransportPolicy fromEnv();

  bool allows(TransportKind kind) const { return (allowed_ & bit(kind)) != 0; }
  // The setting as the user wrote it (empty when unset), for messages.
  const std::string& text() const { return text_; }

 private:
  static unsigned bit(TransportKind kind) { return 1u << static_cast<unsigned>(kind); }

  unsigned allowed_ = ~0u;
  std::string text_;
};

// The transport to a peer: shm within a host, tcp across hosts (rdma is not built yet, so it is
// never chosen), the first of these that the policy allows. `peer` names the peer in messages
// ("rank 3 (host b, pid 912)"). Throws hoopInvalidArgument when the policy leaves nothing that
// can reach the peer, e.g. HOOP_TRANSPORT=shm with a peer on another host.
TransportKind chooseTransport(const TransportPolicy& policy, bool sameHost, std::string_view peer);

}  // namespace hoop
