#include "transport/tcp/tcp_transport.h"

#include <sys/socket.h>

#include "base/logging.h"
#include "transport/tcp/hello.h"
#include "transport/tcp/notice_wire.h"
#include "transport/tcp/status_query.h"

namespace hoop {
namespace {

constexpr int kMaxStreams = 64;
// A notice is written together with its hello, so it is there when the hello is; a sender that
// stalls in between is not worth holding a wait up for longer than this.
constexpr auto kNoticeReadTime = std::chrono::milliseconds(100);

}  // namespace

TcpTransport::TcpTransport(TcpOptions options, UniqueFd listener, std::vector<TcpPeer> peers)
    : options_(std::move(options)),
      listener_(std::move(listener)),
      peers_(std::move(peers)),
      acceptor_(listener_.get(), tcpHelloBytes()) {
  options_.streams = std::clamp(options_.streams, 1, kMaxStreams);
}

std::unique_ptr<TcpConnection> TcpTransport::establish(int peer, Clock::time_point deadline,
                                                       const std::function<bool()>& aborted,
                                                       bool announce) {
  return options_.selfRank < peer ? connectTo(peer, deadline, aborted, announce)
                                  : acceptFrom(peer, deadline, aborted, announce);
}

std::unique_ptr<TcpConnection> TcpTransport::connectTo(int peer, Clock::time_point deadline,
                                                       const std::function<bool()>& aborted,
                                                       bool announce) {
  const TcpPeer& target = peers_[peer];
  std::vector<UniqueFd> streams;
  for (int s = 0; s < options_.streams; ++s) {
    UniqueFd fd = connectWithRetry(target.address, deadline, aborted, target.description);
    tuneDataSocket(fd.get(), options_.tuning);
    TcpHello hello;
    hello.streams = static_cast<uint16_t>(options_.streams);
    hello.streamIndex = static_cast<uint16_t>(s);
    hello.secret = options_.secret;
    hello.jobTag = options_.jobTag;
    hello.fromRank = static_cast<uint32_t>(options_.selfRank);
    hello.toRank = static_cast<uint32_t>(peer);
    auto bytes = encodeTcpHello(hello);
    sendAll(fd.get(), bytes.data(), bytes.size(), deadline, "the hello to " + target.description);
    setNonBlocking(fd.get());
    streams.push_back(std::move(fd));
  }
  log(announce ? LogLevel::kInfo : LogLevel::kTrace, LogSubsys::kNet, options_.selfRank,
      "connected to ", target.description, " at ", target.address.toString(), " over tcp, ",
      streams.size(), " stream(s)");
  return std::make_unique<TcpConnection>(std::move(streams), options_.selfRank, target.description);
}

bool TcpTransport::admit(HandshakeAcceptor::Arrival& arrival) {
  TcpHello hello;
  try {
    hello = decodeTcpHello(arrival.hello);
  } catch (const Error& e) {
    log(LogLevel::kWarn, LogSubsys::kNet, options_.selfRank, "refused a connection from ",
        arrival.from, ": ", e.what());
    return false;
  }
  std::string why;
  if (!hello.secret.matches(options_.secret) || hello.jobTag != options_.jobTag) {
    why = "it did not present this job's secret";
  } else if (hello.toRank != static_cast<uint32_t>(options_.selfRank)) {
    why = str("it was meant for rank ", hello.toRank);
  } else if (hello.fromRank >= peers_.size() ||
             hello.fromRank >= static_cast<uint32_t>(options_.selfRank)) {
    why = str("it claims to be rank ", hello.fromRank);
  } else if (hello.streams < 1 || hello.streams > kMaxStreams ||
             hello.streamIndex >= hello.streams) {
    why = str("bad stream ", hello.streamIndex, " of ", hello.streams);
  }
  // Only a hello that passed the checks above may touch arrived_: a refused stranger leaves
  // nothing behind (its claimed rank would otherwise add an entry per stranger).
  if (why.empty()) {
    auto found = arrived_.find(static_cast<int>(hello.fromRank));
    if (found != arrived_.end() && found->second.size() != hello.streams) {
      why = "inconsistent stream count";
    } else if (found != arrived_.end() && found->second[hello.streamIndex].has_value()) {
      why = "duplicate stream";
    }
  }
  if (!why.empty()) {
    log(LogLevel::kWarn, LogSubsys::kNet, options_.selfRank, "refused a connection from ",
        arrival.from, ": ", why);
    return false;
  }
  auto& slots = arrived_[static_cast<int>(hello.fromRank)];
  slots.resize(hello.streams);
  tuneDataSocket(arrival.fd.get(), options_.tuning);
  slots[hello.streamIndex] = std::move(arrival.fd);
  return true;
}

std::unique_ptr<TcpConnection> TcpTransport::acceptFrom(int peer, Clock::time_point deadline,
                                                        const std::function<bool()>& aborted,
                                                        bool announce) {
  auto complete = [&] {
    auto found = arrived_.find(peer);
    if (found == arrived_.end() || found->second.empty()) return false;
    for (const auto& slot : found->second) {
      if (!slot) return false;
    }
    return true;
  };
  while (!complete()) {
    if (aborted && aborted()) fail(hoopInvalidUsage, "rank ", options_.selfRank, ": aborted");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      fail(hoopTimeout, "rank ", options_.selfRank, ": timed out waiting for ",
           peers_[peer].description, " to connect; did it exit, hang, or call something else?");
    }
    for (auto& arrival : acceptor_.poll(std::min(left, std::chrono::milliseconds(100)))) {
      dispatch(arrival);
    }
  }
  std::vector<UniqueFd> streams;
  for (auto& slot : arrived_[peer]) streams.push_back(std::move(*slot));
  arrived_.erase(peer);
  log(announce ? LogLevel::kInfo : LogLevel::kTrace, LogSubsys::kNet, options_.selfRank,
      "accepted ", peers_[peer].description, " over tcp, ", streams.size(), " stream(s)");
  return std::make_unique<TcpConnection>(std::move(streams), options_.selfRank,
                                         peers_[peer].description);
}

void TcpTransport::dispatch(HandshakeAcceptor::Arrival& arrival) {
  HelloPurpose purpose = HelloPurpose::kData;
  try {
    purpose = decodeTcpHello(arrival.hello).purpose;
  } catch (const Error&) {
    // admit() refuses it and says why.
  }
  switch (purpose) {
    case HelloPurpose::kStatusQuery: answerStatusQuery(arrival); break;
    case HelloPurpose::kFailureNotice: takeNotice(arrival); break;
    case HelloPurpose::kData: admit(arrival); break;
  }
}

std::string TcpTransport::refusalOf(const TcpHello& hello) const {
  if (!hello.secret.matches(options_.secret) || hello.jobTag != options_.jobTag) {
    return "it did not present this job's secret";
  }
  if (hello.toRank != static_cast<uint32_t>(options_.selfRank)) {
    return str("it was meant for rank ", hello.toRank);
  }
  if (hello.fromRank >= peers_.size() ||
      hello.fromRank == static_cast<uint32_t>(options_.selfRank)) {
    return str("it claims to be rank ", hello.fromRank);
  }
  return "";
}

void TcpTransport::answerStatusQuery(HandshakeAcceptor::Arrival& arrival) {
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

void TcpTransport::takeNotice(HandshakeAcceptor::Arrival& arrival) {
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

void TcpTransport::serviceListener() {
  for (auto& arrival : acceptor_.poll(std::chrono::milliseconds(0))) dispatch(arrival);
}

TcpHello TcpTransport::oneShotHello(HelloPurpose purpose, int toRank) const {
  TcpHello hello;
  hello.purpose = purpose;
  hello.streams = 1;
  hello.secret = options_.secret;
  hello.jobTag = options_.jobTag;
  hello.fromRank = static_cast<uint32_t>(options_.selfRank);
  hello.toRank = static_cast<uint32_t>(toRank);
  return hello;
}

std::vector<std::vector<uint8_t>> TcpTransport::askStatus(const std::vector<int>& ranks,
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

size_t TcpTransport::sendNotice(const std::vector<uint8_t>& payload, Clock::time_point until) {
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
