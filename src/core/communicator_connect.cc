// Communicator: reaching peers. Connections are made on first use (ring neighbours at init). Every
// pair gets a TCP link first; then the transport the registry chooses for the pair builds the
// data connection over it (shm within a host, tcp, which carries the data on the link itself).
#include <algorithm>

#include "base/logging.h"
#include "core/communicator.h"
#include "core/device_team.h"
#include "device/device_runtime.h"

namespace hoop {

Connection& Communicator::connection(int peer) {
  if (connections_[peer] == nullptr) connectAll({peer});
  return *connections_[peer];
}

namespace {

// A transport's setup exchange, carried by the pair's TCP link and driven by the communicator's
// wait loop (so it honours the deadline and hoopCommAbort).
class LinkSetupChannel : public SetupChannel {
 public:
  LinkSetupChannel(Communicator& comm, Connection& link, int peer)
      : comm_(comm), link_(link), peer_(peer) {}

  void send(const void* data, size_t bytes) override {
    uint64_t ticket = link_.postSend(data, bytes, kTag);
    comm_.waitUntil([&] { return link_.sendsCompleted() > ticket; }, [&] { return who(); });
  }
  void recv(void* data, size_t bytes) override {
    uint64_t ticket = link_.postRecv(data, bytes, kTag);
    comm_.waitUntil([&] { return link_.recvsCompleted() > ticket; }, [&] { return who(); });
  }

 private:
  static constexpr FrameTag kTag{OpKind::kSetup, 0};
  std::string who() const { return comm_.peer(peer_).describe() + " to set up a connection"; }

  Communicator& comm_;
  Connection& link_;
  int peer_;
};

}  // namespace

std::unique_ptr<SetupChannel> Communicator::setupChannelTo(int peer) {
  return std::make_unique<LinkSetupChannel>(*this, connection(peer), peer);
}

std::string Communicator::transportFor(int peer) const {
  if (peer == rank_) return "self";
  return std::string(chooseTransport(transportPolicy_, pairWith(peer)).name());
}

PeerPair Communicator::pairWith(int peer) const {
  return {.self = rank_,
          .peer = peer,
          .sameHost = peers_[peer].hostId == peers_[rank_].hostId,
          .peerName = peers_[peer].describe(),
          .selfRdma = peers_[rank_].rdma,
          .peerRdma = peers_[peer].rdma};
}

void Communicator::connectAll(const std::vector<int>& peers) {
  auto aborted = [this] { return abortRequested(); };
  std::vector<std::pair<Transport*, int>> pending;
  // The TCP links first, to every peer. Connecting never blocks on the peer (its listen backlog
  // takes us), so do those first; then the accepts, which wait for peers doing the same.
  for (int pass = 0; pass < 2; ++pass) {
    for (int peer : peers) {
      if (peer == rank_ || connections_[peer] != nullptr || setupLinks_[peer]) continue;
      const bool weConnect = rank_ < peer;
      if (weConnect != (pass == 0)) continue;
      std::string passedOver;
      Transport& transport = chooseTransport(transportPolicy_, pairWith(peer),
                                             TransportRegistry::global(), &passedOver);
      if (!passedOver.empty()) {
        log(LogLevel::kInfo, LogSubsys::kNet, rank_, "data to ", peers_[peer].describe(), " over ",
            transport.name(), ", not ", passedOver);
      }
      setupLinks_[peer] = tcp_->establish(peer, deadline(), aborted,
                                          /*announce=*/transport.carriesDataOnLink());
      active_.push_back(setupLinks_[peer].get());
      pending.emplace_back(&transport, peer);
    }
  }
  // A transport's setup may be a blocking exchange between the two ranks. Taking pairs in one
  // global order (by lower rank, then higher) means no rank can wait on a peer that waits on a
  // third rank that waits on the first.
  std::sort(pending.begin(), pending.end(), [this](const auto& a, const auto& b) {
    return std::make_pair(std::min(rank_, a.second), std::max(rank_, a.second)) <
           std::make_pair(std::min(rank_, b.second), std::max(rank_, b.second));
  });
  for (const auto& [transport, peer] : pending) connectWith(*transport, peer);
}

DeviceTeam& Communicator::deviceTeam() {
  if (deviceTeam_ == nullptr) deviceTeam_ = std::make_unique<DeviceTeam>(*this, deviceRuntime());
  return *deviceTeam_;
}

void Communicator::finishDeviceWork() {
  if (deviceTeam_ != nullptr) deviceTeam_->finishEnqueuedWork();
}

Staging& Communicator::premultipliedInput() {
  if (premultipliedInput_ == nullptr)
    premultipliedInput_ = executorFor(MemoryKind::kHost).newStaging();
  return *premultipliedInput_;
}

std::optional<Error> Communicator::deviceFailure() const {
  return deviceTeam_ != nullptr ? deviceTeam_->failure() : std::nullopt;
}

void Communicator::connectEveryone() {
  if (connectedToEveryone_) return;
  std::vector<int> everyone;
  for (int r = 0; r < size(); ++r) everyone.push_back(r);
  connectAll(everyone);
  connectedToEveryone_ = true;
}

void Communicator::connectWith(Transport& transport, int peer) {
  Connection* link = setupLinks_[peer].get();
  LinkSetupChannel channel(*this, *link, peer);
  const TransportSettings settings{config_.shm, config_.rdma, jobTag_, &registry_};
  std::unique_ptr<Connection> data =
      transport.connect(pairWith(peer), setupLinks_[peer], channel, settings);
  log(LogLevel::kTrace, LogSubsys::kNet, rank_, "data to ", peers_[peer].describe(), " over ",
      transport.name(), " (HOOP_TRANSPORT='", transportPolicy_.text(), "')");
  if (data.get() != link) {
    // The link only carried the setup: stop polling it (it stays open, idle, kept here or by the
    // connection that watches it).
    std::erase(active_, link);
    active_.push_back(data.get());
  }
  connections_[peer] = data.get();
  dataConnections_[peer] = std::move(data);
  const std::string name(transport.name());
  if (transportsInUse_.find(name) == std::string::npos) {
    transportsInUse_ += transportsInUse_.empty() ? name : "+" + name;
  }
}

}  // namespace hoop
