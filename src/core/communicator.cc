// Communicator: forming one (rendezvous, rings, the cores ranks share, connections to the ring
// neighbours, calibration) and its small services. Connecting to peers is in
// communicator_connect.cc, waiting on them in communicator_wait.cc.
#include "core/communicator.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "algorithms/calibration.h"
#include "base/logging.h"
#include "core/device_team.h"
#include "core/rank_affinity.h"
#include "topology/host_cores.h"
#include "topology/host_ranks.h"
#include "transport/rdma/rdma_device.h"
#include "transport/tcp/interfaces.h"

namespace hoop {

namespace {

// Shows a communicator under construction to `hook` for as long as it exists here: declared after
// it, so withdrawn first on every way out of create().
class Announcement {
 public:
  Announcement(const std::function<void(Communicator*)>& hook, Communicator* comm) : hook_(hook) {
    if (hook_) hook_(comm);
  }
  ~Announcement() {
    if (hook_) hook_(nullptr);
  }
  Announcement(const Announcement&) = delete;
  Announcement& operator=(const Announcement&) = delete;

 private:
  const std::function<void(Communicator*)>& hook_;
};

}  // namespace

std::unique_ptr<Communicator> Communicator::create(
    const BootstrapId& id, int nranks, int rank, std::unique_ptr<RootService> root,
    const Config& config, const std::function<void(Communicator*)>& announce) {
  std::unique_ptr<Communicator> comm(new Communicator());
  comm->rank_ = rank;
  comm->config_ = config;
  // Before the rendezvous: a rank that cannot join must not leave the others waiting for it.
  if (!config.socketCongestion.empty()) checkCongestionControl(config.socketCongestion);
  // Before the rendezvous too: every rank brings its digest to it (agreed_settings.h).
  comm->transportPolicy_ = TransportPolicy::fromEnv();
  comm->jobTag_ = id.jobTag;
  // Looked at before the rendezvous, which carries every rank's summary to every rank: a few
  // sysfs reads, and libibverbs loaded only where a device exists.
  RdmaReach rdma;
  if (comm->transportPolicy_.allows("rdma")) {
    const RdmaDiscovery discovery = discoverRdma(comm->config_.rdma);
    rdma = discovery.reach;
    log(LogLevel::kInfo, LogSubsys::kInit, rank, discovery.detail);
  }
  comm->wakeup_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!comm->wakeup_.valid()) fail(hoopSystemError, "eventfd: ", errnoText(errno));
  const Announcement announcement(announce, comm.get());
  const auto deadline = Clock::now() + comm->config_.initTimeout;
  const RankAffinity affinity = planRankAffinity();
  comm->config_.shm.numaNode = affinity.numaNode;

  UniqueFd listener;
  auto describeSelf = [&](const SocketAddress& towardsRoot) {
    SocketAddress address = chooseListenAddress(&towardsRoot, affinity.nicInterface);
    address.setPort(0);
    listener = listenOn(address, 1024, /*reuseAddress=*/false);
    PeerInfo self;
    self.pid = static_cast<int>(getpid());
    self.hostId = localHostId();
    self.hostName = localHostName();
    self.listenAddress = SocketAddress::localOf(listener.get());
    self.cpus = ownCpuMask();
    self.level2BytesPerCpu = hoop::level2BytesPerCpu(self.cpus);
    self.settings = digestSettings(comm->config_, comm->transportPolicy_);
    self.rdma = rdma;
    return self;
  };
  comm->peers_ =
      rendezvous(id, nranks, rank, describeSelf, deadline, [&] { return comm->abortRequested(); });
  comm->size_ = static_cast<int>(comm->peers_.size());
  root.reset();  // the rendezvous answered everyone; its thread has ended or ends now
  // Every rank holds the same table, so a difference fails every rank here, before any connects.
  checkSettingsAgree(comm->peers_, rank, comm->config_, comm->transportPolicy_);
  if (!affinity.summary.empty()) {
    log(LogLevel::kInfo, LogSubsys::kInit, rank, "placement: ", affinity.summary, "; listening on ",
        comm->peers_[rank].listenAddress.toString());
  }

  comm->buildRings();
  comm->adaptToCores();

  TcpOptions options;
  options.selfRank = rank;
  options.secret = id.secret;
  options.jobTag = id.jobTag;
  options.streams = comm->config_.socketStreams;
  options.tuning = comm->config_.dataSocketTuning();
  std::vector<TcpPeer> tcpPeers;
  for (const PeerInfo& p : comm->peers_) tcpPeers.push_back({p.listenAddress, p.describe()});
  comm->control_ = std::make_unique<ControlPlane>(ControlOptions{rank, id.secret, id.jobTag},
                                                  std::move(listener), tcpPeers);
  ControlPlane& control = *comm->control_;
  comm->tcp_ = std::make_unique<TcpTransport>(
      options, std::move(tcpPeers),
      [&control](std::chrono::milliseconds wait) { control.serviceListenerFor(wait); });
  TcpTransport& links = *comm->tcp_;
  control.setLinkReceiver([&links](HandshakeAcceptor::Arrival& arrival) { links.admit(arrival); });
  comm->connections_.assign(nranks, nullptr);
  comm->watch_.attach({rank, &comm->peers_, comm->control_.get(), &comm->connections_,
                       &comm->abort_, comm->config_.opTimeout});
  comm->everyPeerSharesMemory_ = nranks > 1;
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    comm->everyPeerSharesMemory_ &=
        chooseTransport(comm->transportPolicy_, comm->pairWith(peer)).sharesMemory();
  }
  comm->setupLinks_.resize(nranks);
  comm->dataConnections_.resize(nranks);
  comm->sendSeq_.assign(nranks, 0);
  comm->recvSeq_.assign(nranks, 0);

  comm->beginOperation(OpKind::kSetup, 0);
  comm->deadline_ = deadline;
  // The ring neighbours are needed by nearly every collective: connect them now, so a peer
  // that cannot be reached fails initialisation rather than the first collective.
  std::vector<int> neighbours;
  for (const Ring* ring : {&comm->ring_, &comm->localRing_, &comm->crossRing_}) {
    if (ring->size() <= 1) continue;
    neighbours.push_back(ring->next());
    neighbours.push_back(ring->prev());
  }
  comm->connectAll(neighbours);
  calibrateCostModel(*comm);
  log(LogLevel::kInfo, LogSubsys::kInit, rank, "communicator ready: rank ", rank, " of ", nranks,
      ", local rank ", comm->localRank_, " of ", comm->localSize_, ", cross rank ",
      comm->crossRank_, " of ", comm->crossSize_, ", ", comm->config_.socketStreams,
      " tcp stream(s) per peer, id ", comm->peers_[rank].hostName);
  return comm;
}

Communicator::~Communicator() = default;

void Communicator::buildRings() {
  std::vector<uint64_t> hostIdByRank;
  for (const PeerInfo& p : peers_) hostIdByRank.push_back(p.hostId);
  const LocalRank local = localRankOf(hostIdByRank, rank_);
  localRank_ = local.rank;
  localSize_ = local.size;

  ring_.ranks = ringOrder(hostIdByRank);
  ring_.position = std::find(ring_.ranks.begin(), ring_.ranks.end(), rank_) - ring_.ranks.begin();

  // The ring lists hosts one after another, so cutting it into host-sized runs gives each
  // host's ranks; the hierarchy needs every run to be the same length.
  std::vector<std::vector<int>> ranksOfHost;
  for (int r : ring_.ranks) {
    if (ranksOfHost.empty() || peers_[ranksOfHost.back().front()].hostId != peers_[r].hostId) {
      ranksOfHost.emplace_back();
    }
    ranksOfHost.back().push_back(r);
  }
  hostCount_ = static_cast<int>(ranksOfHost.size());
  crossSize_ = 0;
  for (const auto& hostRanks : ranksOfHost) {
    if (hostRanks.size() <= static_cast<size_t>(localRank_)) continue;
    if (hostRanks[localRank_] == rank_) crossRank_ = crossSize_;
    ++crossSize_;
  }
  const bool uniform = std::all_of(ranksOfHost.begin(), ranksOfHost.end(), [&](const auto& r) {
    return r.size() == static_cast<size_t>(localSize_);
  });
  if (uniform && size() > 1) {
    for (size_t host = 0; host < ranksOfHost.size(); ++host) {
      const auto& hostRanks = ranksOfHost[host];
      crossRing_.ranks.push_back(hostRanks[localRank_]);
      if (hostRanks[localRank_] == rank_) {
        localRing_ = {hostRanks, static_cast<size_t>(localRank_)};
        crossRing_.position = host;
      }
    }
  }
}

void Communicator::adaptToCores() {
  // Every rank's mask and cache came in the rendezvous table, so every rank computes the same.
  // The union of a host's masks: ranks bound to a core each (as mpirun binds two) are not
  // sharing one, though each sees a single core in its own mask.
  std::map<uint64_t, std::vector<CpuMask>> masksByHost;
  for (const PeerInfo& peer : peers_) {
    masksByHost[peer.hostId].push_back(peer.cpus);
    if (peer.level2BytesPerCpu != 0 &&
        (level2BytesPerCpu_ == 0 || peer.level2BytesPerCpu < level2BytesPerCpu_)) {
      level2BytesPerCpu_ = peer.level2BytesPerCpu;
    }
  }
  size_t cores = 1;  // in the union of this host's masks
  for (const auto& [host, masks] : masksByHost) {
    const size_t cpus = cpusInUnion(masks);
    ranksPerCpu_ =
        std::max(ranksPerCpu_, static_cast<double>(masks.size()) / static_cast<double>(cpus));
    if (host == peers_[rank_].hostId) cores = cpus;
  }
  log(LogLevel::kInfo, LogSubsys::kInit, rank_, localSize_, " rank(s) on ", cores,
      " CPU(s) of this host; on any host at most ", ranksPerCpu_,
      " rank(s) per CPU; level-2 cache ", level2BytesPerCpu_ >> 10, " KiB per CPU (0: not known)");
  const bool shareCores = static_cast<size_t>(localSize_) > cores;
  if (shareCores && !config_.spinSetByUser) {
    config_.spinBeforeSleep = std::chrono::microseconds(0);
    log(LogLevel::kInfo, LogSubsys::kInit, rank_, localSize_, " ranks share ", cores,
        " core(s) on this host: waits yield at once instead of spinning (HOOP_SPIN_US overrides)");
  }
  // Each rank spreads its messages over one ring's worth of slot bytes in all, split among its
  // local peers, so the lines all ranks cycle through stay a bounded share of the shared cache.
  if (!config_.shm.spreadSetByUser && localSize_ > 1) {
    config_.shm.spreadBytes =
        shareCores ? 0 : config_.shm.slotBytes / static_cast<size_t>(localSize_ - 1);
  }
}

}  // namespace hoop
