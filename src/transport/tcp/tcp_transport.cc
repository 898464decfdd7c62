#include "transport/tcp/tcp_transport.h"

#include <sys/socket.h>

#include "base/logging.h"
#include "transport/tcp/hello.h"

namespace hoop {
namespace {

constexpr int kMaxStreams = 64;

}  // namespace

TcpTransport::TcpTransport(TcpOptions options, std::vector<TcpPeer> peers,
                           std::function<void(std::chrono::milliseconds)> awaitArrivals)
    : options_(std::move(options)),
      peers_(std::move(peers)),
      awaitArrivals_(std::move(awaitArrivals)) {
  options_.streams = std::clamp(options_.streams, 1, kMaxStreams);
}

TcpTransport::TcpTransport(TcpOptions options, UniqueFd listener, std::vector<TcpPeer> peers)
    : TcpTransport(std::move(options), std::move(peers), nullptr) {
  ownListener_ = std::move(listener);
  ownAcceptor_ = std::make_unique<HandshakeAcceptor>(ownListener_.get(), tcpHelloBytes());
  awaitArrivals_ = [this](std::chrono::milliseconds wait) {
    for (auto& arrival : ownAcceptor_->poll(wait)) admit(arrival);
  };
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
  std::string why =
      hello.purpose != HelloPurpose::kData
          ? "it is no link's stream"
          : helloRefusal(hello, options_.secret, options_.jobTag, options_.selfRank, peers_.size());
  // Of a pair, the lower rank connects: a higher rank's link is no link of this job's either.
  if (why.empty() && hello.fromRank > static_cast<uint32_t>(options_.selfRank)) {
    why = str("it claims to be rank ", hello.fromRank);
  } else if (why.empty() && (hello.streams < 1 || hello.streams > kMaxStreams ||
                             hello.streamIndex >= hello.streams)) {
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
    awaitArrivals_(std::min(left, std::chrono::milliseconds(100)));
  }
  std::vector<UniqueFd> streams;
  for (auto& slot : arrived_[peer]) streams.push_back(std::move(*slot));
  arrived_.erase(peer);
  log(announce ? LogLevel::kInfo : LogLevel::kTrace, LogSubsys::kNet, options_.selfRank,
      "accepted ", peers_[peer].description, " over tcp, ", streams.size(), " stream(s)");
  return std::make_unique<TcpConnection>(std::move(streams), options_.selfRank,
                                         peers_[peer].description);
}

}  // namespace hoop
