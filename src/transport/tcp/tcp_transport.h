// Builds TcpConnections between ranks. Of each pair, the lower rank connects and the higher rank
// accepts, so a pair never ends up with two connections; connecting never waits for the peer to
// call accept (the listen backlog takes it), so ranks may set up their connections in any order.
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
  TcpTransport(TcpOptions options, UniqueFd listener, std::vector<TcpPeer> peers);

  // Returns the connection to `peer`, connecting or accepting as the pair's rule says. Waits at
  // most until `deadline`; `aborted` is polled while waiting. `announce` logs the connection at
  // INFO (off when it only carries the setup of another transport).
  std::unique_ptr<TcpConnection> establish(int peer, Clock::time_point deadline,
                                           const std::function<bool()>& aborted,
                                           bool announce = true);
  // Starts the connecting half ahead of time (so several can be in flight); no-op for accepts.
  const TcpOptions& options() const { return options_; }

  // Status queries (hellos with purpose kStatusQuery, see status_query.h) are answered with what
  // `answer` returns at the time; without a responder they are refused.
  void setStatusResponder(std::function<std::vector<uint8_t>()> answer) {
    statusResponder_ = std::move(answer);
  }
  // Failure notices (hellos with purpose kFailureNotice, see notice_wire.h) from a rank of this
  // job are handed to `take` with the sender's rank and the payload; without it they are refused.
  void setNoticeReceiver(std::function<void(int, const std::vector<uint8_t>&)> take) {
    noticeReceiver_ = std::move(take);
  }
  // Takes what waits at the listener without blocking: answers status queries, keeps data
  // streams for a later establish(). One poll(2) when nothing is there.
  void serviceListener();
  // Asks each of `ranks` what it is doing; their answers by position (empty: none by `until`,
  // or `aborted` turned true first). Queries sent to this rank meanwhile are answered.
  std::vector<std::vector<uint8_t>> askStatus(const std::vector<int>& ranks,
                                              Clock::time_point until,
                                              const std::function<bool()>& aborted);
  // Sends `payload` as a failure notice to every other rank at once, until each has taken it or
  // `until` passed; notices and queries sent to this rank meanwhile are taken and answered.
  // Returns how many ranks confirmed it.
  size_t sendNotice(const std::vector<uint8_t>& payload, Clock::time_point until);

 private:
  std::unique_ptr<TcpConnection> connectTo(int peer, Clock::time_point deadline,
                                           const std::function<bool()>& aborted, bool announce);
  std::unique_ptr<TcpConnection> acceptFrom(int peer, Clock::time_point deadline,
                                            const std::function<bool()>& aborted, bool announce);
  // Validates a hello and files the stream under its rank; false (logged) for strangers.
  bool admit(HandshakeAcceptor::Arrival& arrival);
  // A status query goes to answerStatusQuery, anything else to admit.
  void dispatch(HandshakeAcceptor::Arrival& arrival);
  void answerStatusQuery(HandshakeAcceptor::Arrival& arrival);
  void takeNotice(HandshakeAcceptor::Arrival& arrival);
  // Why a one-shot hello (query or notice) is refused; empty when it is from a rank of this job.
  std::string refusalOf(const TcpHello& hello) const;
  TcpHello oneShotHello(HelloPurpose purpose, int toRank) const;

  TcpOptions options_;
  UniqueFd listener_;
  std::vector<TcpPeer> peers_;
  HandshakeAcceptor acceptor_;
  // Streams accepted from peers this rank has not asked for yet, by rank then stream index.
  std::map<int, std::vector<std::optional<UniqueFd>>> arrived_;
  std::function<std::vector<uint8_t>()> statusResponder_;
  std::function<void(int, const std::vector<uint8_t>&)> noticeReceiver_;
};

}  // namespace hoop
