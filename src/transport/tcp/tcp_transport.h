// Builds the pairs' TCP links (TcpConnections). Of each pair, the lower rank connects and the
// higher rank accepts, so a pair never ends up with two links; connecting never waits for the peer
// to call accept (the listen backlog takes it), so ranks may set up their links in any order. The
// listening socket belongs to the control plane (core/control_plane.h), which hands the links'
// streams here as they arrive (admit).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/secret.h"
#include "transport/tcp/handshake_acceptor.h"
#include "transport/tcp/hello.h"
#include "transport/tcp/tcp_connection.h"

namespace hoop {

struct TcpPeer {
  SocketAddress address;
  std::string description;  // "rank 3 (host b, pid 912)"
};

struct TcpOptions {
  int selfRank = 0;
  Secret secret;
  uint64_t jobTag = 0;
  int streams = 1;          // HOOP_SOCKET_NSTREAMS
  DataSocketTuning tuning;  // HOOP_SOCKET_BUFFER, HOOP_SOCKET_CONGESTION, HOOP_SOCKET_NOTSENT_LOWAT
};

class TcpTransport {
 public:
  // `awaitArrivals(wait)`: lets whatever arrives at this rank's listener within `wait` be handed
  // on (the links' streams to admit()), as the control plane does.
  TcpTransport(TcpOptions options, std::vector<TcpPeer> peers,
               std::function<void(std::chrono::milliseconds)> awaitArrivals);
  // Standalone, for programs that want links and no control plane (tests, benchmarks): it
  // listens on `listener` itself and takes only links' streams there.
  TcpTransport(TcpOptions options, UniqueFd listener, std::vector<TcpPeer> peers);

  // Returns the link to `peer`, connecting or accepting as the pair's rule says. Waits at most
  // until `deadline`; `aborted` is polled while waiting. `announce` logs the link at INFO (off
  // when it only carries the setup of another transport).
  std::unique_ptr<TcpConnection> establish(int peer, Clock::time_point deadline,
                                           const std::function<bool()>& aborted,
                                           bool announce = true);
  const TcpOptions& options() const { return options_; }

  // Validates a link's hello and files the stream under its rank for a later establish(); false
  // (logged) for strangers and malformed or duplicate streams.
  bool admit(HandshakeAcceptor::Arrival& arrival);

 private:
  std::unique_ptr<TcpConnection> connectTo(int peer, Clock::time_point deadline,
                                           const std::function<bool()>& aborted, bool announce);
  std::unique_ptr<TcpConnection> acceptFrom(int peer, Clock::time_point deadline,
                                            const std::function<bool()>& aborted, bool announce);

  TcpOptions options_;
  std::vector<TcpPeer> peers_;
  std::function<void(std::chrono::milliseconds)> awaitArrivals_;
  // Standalone only: the listener it services itself.
  UniqueFd ownListener_;
  std::unique_ptr<HandshakeAcceptor> ownAcceptor_;
  // Streams accepted from peers this rank has not asked for yet, by rank then stream index.
  std::map<int, std::vector<std::optional<UniqueFd>>> arrived_;
};

}  // namespace hoop
