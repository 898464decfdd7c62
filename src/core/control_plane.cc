#include "core/control_plane.h"

#include <sys/socket.h>

#include "base/logging.h"
#include "transport/tcp/notice_wire.h"
#include "transport/tcp/status_query.h"

namespace hoop {
namespace {

// A notice is written together with its hello, so it is there when the hello is; a sender that
// stalls in between is not worth holding a wait up for longer than this.
constexpr auto kNoticeReadTime = std::chrono::milliseconds(100);

}  // namespace

ControlPlane::ControlPlane(ControlOptions options, UniqueFd listener, std::vector<TcpPeer> peers)
    : options_(std::move(options)),
      listener_(std::move(listener)),
      peers_(std::move(peers)),
      acceptor_(listener_.get(), tcpHelloBytes()) {}

void ControlPlane::serviceListenerFor(std::chrono::milliseconds wait) {
  for (auto& arrival : acceptor_.poll(wait)) dispatch(arrival);
}

void ControlPlane::dispatch(HandshakeAcceptor::Arrival& arrival) {
  HelloPurpose purpose = HelloPurpose::kData;
  try {
    purpose = decodeTcpHello(arrival.hello).purpose;
  } catch (const Error&) {
    // admit() refuses it and says why.
  }
  switch (purpose) {
    case HelloPurpose::kStatusQuery: answerStatusQuery(arrival); break;
    case HelloPurpose::kFailureNotice: takeNotice(arrival); break;
    case HelloPurpose::kData:
      if (linkReceiver_) {
        linkReceiver_(arrival);
      } else {
        log(LogLevel::kWarn, LogSubsys::kNet, options_.selfRank, "refused a connection from ",
            arrival.from, ": this rank takes no links yet");
      }
      break;
  }
}

std::string ControlPlane::refusalOf(const TcpHello& hello) const {
  return helloRefusal(hello, options_.secret, options_.jobTag, options_.selfRank, peers_.size());
}

void ControlPlane::answerStatusQuery(HandshakeAcceptor::Arrival& arrival) {
  const TcpHello hello = decodeTcpHello(arrival.hello);
  std::string why = refusalOf(hello);
  if (why.empty() && !statusResponder_) why = "this rank does not answer status queries";
  if (!why.empty()) {
    log(LogLevel::kWarn, LogSubsys::kNet, options_.selfRank, "refused a status query from ",
        arrival.from, ": ", why);
    return;
  }
  // The answer is small and the socket new, so it fits the send buffer at once; a peer that
  // does not read it loses it, and nobody here waits for that.
  const std::vector<uint8_t> framed = frameStatusAnswer(statusResponder_());
  const ssize_t sent =
      ::send(arrival.fd.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  log(LogLevel::kInfo, LogSubsys::kNet, options_.selfRank, "answered a status query from ",
      peers_[hello.fromRank].description,
      sent == static_cast<ssize_t>(framed.size()) ? "" : " (the answer did not fit; dropped)");
}

void ControlPlane::takeNotice(HandshakeAcceptor::Arrival& arrival) {
  const TcpHello hello = decodeTcpHello(arrival.hello);
  std::string why = refusalOf(hello);
  if (why.empty() && !noticeReceiver_) why = "this rank does not take failure notices";
  std::optional<std::vector<uint8_t>> payload;
  if (why.empty()) {
    payload = readFramedMessage(arrival.fd.get(), kMaxNoticeBytes, kNoticeReadTime);
    if (!payload) why = "its notice was missing, cut short or too long";
  }
  if (!why.empty()) {
    log(LogLevel::kWarn, LogSubsys::kNet, options_.selfRank, "refused a failure notice from ",
        arrival.from, ": ", why);
    return;
  }
  noticeReceiver_(static_cast<int>(hello.fromRank), *payload);
  // The empty frame says "taken"; like a status answer it fits the new socket's buffer.
  const std::vector<uint8_t> taken = frameNotice({});
  (void)::send(arrival.fd.get(), taken.data(), taken.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

TcpHello ControlPlane::oneShotHello(HelloPurpose purpose, int toRank) const {
  TcpHello hello;
  hello.purpose = purpose;
  hello.streams = 1;
  hello.secret = options_.secret;
  hello.jobTag = options_.jobTag;
  hello.fromRank = static_cast<uint32_t>(options_.selfRank);
  hello.toRank = static_cast<uint32_t>(toRank);
  return hello;
}

std::vector<std::vector<uint8_t>> ControlPlane::askStatus(const std::vector<int>& ranks,
                                                          Clock::time_point until,
                                                          const std::function<bool()>& aborted) {
  std::vector<StatusTarget> targets;
  for (int rank : ranks) {
    targets.push_back(
        {peers_[rank].address, encodeTcpHello(oneShotHello(HelloPurpose::kStatusQuery, rank))});
  }
  return askForStatus(targets, until, [&] {
    serviceListener();
    return !aborted();
  });
}

size_t ControlPlane::sendNotice(const std::vector<uint8_t>& payload, Clock::time_point until) {
  // The notice rides behind the hello in one send; the receiver's empty answer confirms it, so a
  // status query's machinery carries it (parallel non-blocking connects, one deadline).
  const std::vector<uint8_t> framed = frameNotice(payload);
  std::vector<StatusTarget> targets;
  for (int rank = 0; rank < static_cast<int>(peers_.size()); ++rank) {
    if (rank == options_.selfRank) continue;
    std::vector<uint8_t> bytes = encodeTcpHello(oneShotHello(HelloPurpose::kFailureNotice, rank));
    bytes.insert(bytes.end(), framed.begin(), framed.end());
    targets.push_back({peers_[rank].address, std::move(bytes)});
  }
  size_t confirmed = 0;
  askForStatus(
      targets, until,
      [&] {
        serviceListener();
        return true;
      },
      /*maxInFlight=*/64, &confirmed);
  return confirmed;
}

}  // namespace hoop
