// Communicator: reaching peers. Connections are made on first use (ring neighbours at init),
// TCP to every peer first, then shared memory set up over that TCP connection where the policy
// and the hosts allow it.
#include <algorithm>

#include "base/logging.h"
#include "core/communicator.h"
#include "transport/shm/shm_setup.h"

namespace hoop {

Connection& Communicator::connection(int peer) {
  if (connections_[peer] == nullptr) connectAll({peer});
  return *connections_[peer];
}

ShmConnection* Communicator::shmConnection(int peer) {
  connection(peer);
  return shmConnections_[peer].get();
}

namespace {

// The shm setup's blocking exchange, carried by the pair's TCP connection and driven by the
// communicator's wait loop (so it honours the deadline and hoopCommAbort).
class TcpSetupChannel : public SetupChannel {
 public:
  TcpSetupChannel(Communicator& comm, Connection& tcp, int peer)
      : comm_(comm), tcp_(tcp), peer_(peer) {}

  void send(const void* data, size_t bytes) override {
    uint64_t ticket = tcp_.postSend(data, bytes, kTag);
    comm_.waitUntil([&] { return tcp_.sendsCompleted() > ticket; }, [&] { return who(); });
  }
  void recv(void* data, size_t bytes) override {
    uint64_t ticket = tcp_.postRecv(data, bytes, kTag);
    comm_.waitUntil([&] { return tcp_.recvsCompleted() > ticket; }, [&] { return who(); });
  }

 private:
  static constexpr FrameTag kTag{OpKind::kSetup, 0};
  std::string who() const { return comm_.peer(peer_).describe() + " to set up shared memory"; }

  Communicator& comm_;
  Connection& tcp_;
  int peer_;
};

}  // namespace

void Communicator::connectAll(const std::vector<int>& peers) {
  auto aborted = [this] { return abortRequested(); };
  std::vector<int> shmPeers;
  // TCP first, to every peer: it carries the data across hosts and the shm setup within one.
  // Connecting never blocks on the peer (its listen backlog takes us), so do those first; then
  // the accepts, which wait for peers that are doing the same.
  for (int pass = 0; pass < 2; ++pass) {
    for (int peer : peers) {
      if (peer == rank_ || connections_[peer] != nullptr || tcpConnections_[peer]) continue;
      bool weConnect = rank_ < peer;
      if (weConnect != (pass == 0)) continue;
      const bool sameHost = peers_[peer].hostId == peers_[rank_].hostId;
      const TransportKind kind =
          chooseTransport(transportPolicy_, sameHost, peers_[peer].describe());
      tcpConnections_[peer] =
          tcp_->establish(peer, deadline(), aborted, /*announce=*/kind == TransportKind::kTcp);
      active_.push_back(tcpConnections_[peer].get());
      if (kind == TransportKind::kShm) {
        shmPeers.push_back(peer);
      } else {
        connections_[peer] = tcpConnections_[peer].get();
      }
    }
  }
  // Each shm setup is a blocking exchange between two ranks. Taking pairs in one global order
  // (by lower rank, then higher) means no rank can wait on a peer that waits on a third rank
  // that waits on the first.
  std::sort(shmPeers.begin(), shmPeers.end(), [this](int a, int b) {
    return std::make_pair(std::min(rank_, a), std::max(rank_, a)) <
           std::make_pair(std::min(rank_, b), std::max(rank_, b));
  });
  for (int peer : shmPeers) setUpShm(peer);
}

void Communicator::connectEveryone() {
  if (connectedToEveryone_) return;
  std::vector<int> everyone;
  for (int r = 0; r < size(); ++r) everyone.push_back(r);
  connectAll(everyone);
  connectedToEveryone_ = true;
}

void Communicator::setUpShm(int peer) {
  TcpSetupChannel channel(*this, *tcpConnections_[peer], peer);
  auto shm = connectShm(rank_, peer, peers_[peer].describe(), channel, config_.shm);
  // Same shape as the tcp lines ("connected to X at WHERE over T"), so logs read alike.
  const char* path = shm->sendsViaCma() ? "single-copy reads for large messages" : "slot copies";
  if (rank_ < peer) {
    log(LogLevel::kInfo, LogSubsys::kNet, rank_, "connected to ", peers_[peer].describe(), " at ",
        shm->segmentName(), " over shm (", path, ")");
  } else {
    log(LogLevel::kInfo, LogSubsys::kNet, rank_, "accepted ", peers_[peer].describe(),
        " over shm (", path, ")");
  }
  connections_[peer] = shm.get();
  // The TCP connection only carried the setup: stop polling it (it stays open, idle).
  std::erase(active_, tcpConnections_[peer].get());
  active_.push_back(shm.get());
  shmConnections_[peer] = std::move(shm);
}

}  // namespace hoop
