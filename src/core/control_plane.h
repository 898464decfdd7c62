// The control plane: what ranks say to each other about the job rather than its data. Status
// queries (what is each rank doing: the hang report), failure notices (a rank that found the job
// broken tells the others at once) and the arrival of the pairs' TCP links all come in at this
// rank's one listening socket, authenticated by the job secret. It stays on TCP whatever carries
// the data (shm, rdma, cuda_ipc), so a rank stuck in a data wait can still be asked and told.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "base/clock.h"
#include "base/secret.h"
#include "base/unique_fd.h"
#include "transport/tcp/handshake_acceptor.h"
#include "transport/tcp/hello.h"
#include "transport/tcp/tcp_transport.h"

namespace hoop {

struct ControlOptions {
  int selfRank = 0;
  Secret secret;
  uint64_t jobTag = 0;
};

class ControlPlane {
 public:
  // `listener`: this rank's listening socket, whose address every peer got at the rendezvous.
  // `peers`: every rank's address and name, by rank.
  ControlPlane(ControlOptions options, UniqueFd listener, std::vector<TcpPeer> peers);

  uint64_t jobTag() const { return options_.jobTag; }

  // Status queries are answered with what `answer` returns at the time; without a responder they
  // are refused.
  void setStatusResponder(std::function<std::vector<uint8_t>()> answer) {
    statusResponder_ = std::move(answer);
  }
  // Failure notices from a rank of this job are handed to `take` with the sender's rank and the
  // payload; without it they are refused.
  void setNoticeReceiver(std::function<void(int, const std::vector<uint8_t>&)> take) {
    noticeReceiver_ = std::move(take);
  }
  // The streams of a pair's TCP link go to `take` (TcpTransport::admit), which checks them.
  void setLinkReceiver(std::function<void(HandshakeAcceptor::Arrival&)> take) {
    linkReceiver_ = std::move(take);
  }

  // Takes what waits at the listener without blocking: answers queries, keeps notices, hands
  // links on. One poll(2) when nothing is there.
  void serviceListener() { serviceListenerFor(std::chrono::milliseconds(0)); }
  // The same, waiting up to `wait` for something to arrive.
  void serviceListenerFor(std::chrono::milliseconds wait);

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
  void dispatch(HandshakeAcceptor::Arrival& arrival);
  void answerStatusQuery(HandshakeAcceptor::Arrival& arrival);
  void takeNotice(HandshakeAcceptor::Arrival& arrival);
  // Why a one-shot hello (query or notice) is refused; empty when it is from a rank of this job.
  std::string refusalOf(const TcpHello& hello) const;
  TcpHello oneShotHello(HelloPurpose purpose, int toRank) const;

  ControlOptions options_;
  UniqueFd listener_;
  std::vector<TcpPeer> peers_;
  HandshakeAcceptor acceptor_;
  std::function<std::vector<uint8_t>()> statusResponder_;
  std::function<void(int, const std::vector<uint8_t>&)> noticeReceiver_;
  std::function<void(HandshakeAcceptor::Arrival&)> linkReceiver_;
};

}  // namespace hoop
