#include "core/communicator.h"

#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "core/logging.h"
#include "topology/host_ranks.h"
#include "transport/tcp/interfaces.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HOOP_CPU_RELAX() _mm_pause()
#else
#define HOOP_CPU_RELAX() ((void)0)
#endif

namespace hoop {

std::unique_ptr<Communicator> Communicator::create(const BootstrapId& id, int nranks, int rank,
                                                   std::unique_ptr<RootService> root) {
  std::unique_ptr<Communicator> comm(new Communicator());
  comm->rank_ = rank;
  comm->config_ = Config::fromEnvironment();
  comm->wakeup_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!comm->wakeup_.valid()) fail(hoopSystemError, "eventfd: ", errnoText(errno));
  const auto deadline = Clock::now() + comm->config_.initTimeout;

  UniqueFd listener;
  auto describeSelf = [&](const SocketAddress& towardsRoot) {
    SocketAddress address = chooseListenAddress(&towardsRoot);
    address.setPort(0);
    listener = listenOn(address, 1024, /*reuseAddress=*/false);
    PeerInfo self;
    self.pid = static_cast<int>(getpid());
    self.hostId = localHostId();
    self.hostName = localHostName();
    self.listenAddress = SocketAddress::localOf(listener.get());
    return self;
  };
  comm->peers_ = rendezvous(id, nranks, rank, describeSelf, deadline);
  root.reset();  // the rendezvous answered everyone; its thread has ended or ends now

  comm->buildRings();
  comm->adaptSpinToCores();

  TcpOptions options;
  options.selfRank = rank;
  options.secret = id.secret;
  options.jobTag = id.jobTag;
  options.streams = comm->config_.socketStreams;
  options.socketBufferBytes = comm->config_.socketBufferBytes;
  std::vector<TcpPeer> tcpPeers;
  for (const PeerInfo& p : comm->peers_) tcpPeers.push_back({p.listenAddress, p.describe()});
  comm->tcp_ = std::make_unique<TcpTransport>(options, std::move(listener), std::move(tcpPeers));
  comm->connections_.resize(nranks);
  comm->sendSeq_.assign(nranks, 0);
  comm->recvSeq_.assign(nranks, 0);

  comm->beginOperation("initialisation");
  comm->deadline_ = deadline;
  // The ring neighbours are needed by nearly every collective: connect them now, so a peer
  // that cannot be reached fails initialisation rather than the first collective.
  std::vector<int> neighbours;
  for (const Ring* ring : {&comm->ring_, &comm->localRing_, &comm->crossRing_}) {
    if (ring->size() > 1) neighbours.insert(neighbours.end(), {ring->next(), ring->prev()});
  }
  comm->connectAll(neighbours);
  log(LogLevel::kInfo, LogSubsys::kInit, rank, "communicator ready: rank ", rank, " of ", nranks,
      ", local rank ", comm->localRank_, " of ", comm->localSize_, ", ",
      comm->config_.socketStreams, " tcp stream(s) per peer, id ", comm->peers_[rank].hostName);
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

void Communicator::adaptSpinToCores() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const int cores = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
  if (localSize_ > cores && !config_.spinSetByUser) {
    config_.spinBeforeSleep = std::chrono::microseconds(0);
    log(LogLevel::kInfo, LogSubsys::kInit, rank_, localSize_, " ranks share ", cores,
        " core(s) on this host: waits yield at once instead of spinning (HOOP_SPIN_US overrides)");
  }
}

Connection& Communicator::connection(int peer) {
  if (!connections_[peer]) connectAll({peer});
  return *connections_[peer];
}

void Communicator::connectAll(const std::vector<int>& peers) {
  auto aborted = [this] { return abortRequested(); };
  // Connecting never blocks on the peer (its listen backlog takes us), so do those first; then
  // the accepts, which wait for peers that are doing the same.
  for (int pass = 0; pass < 2; ++pass) {
    for (int peer : peers) {
      if (peer == rank_ || connections_[peer]) continue;
      bool weConnect = rank_ < peer;
      if (weConnect != (pass == 0)) continue;
      connections_[peer] = tcp_->establish(peer, deadline_, aborted);
      active_.push_back(connections_[peer].get());
    }
  }
}

void Communicator::beginOperation(std::string description) {
  operation_ = std::move(description);
  deadline_ = Clock::now() + config_.opTimeout;
}

void Communicator::progressAll(bool& moved) {
  for (Connection* c : active_) moved |= c->progress();
}

void Communicator::waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) {
  auto spinUntil = Clock::now() + config_.spinBeforeSleep;
  int yields = 0;
  while (true) {
    bool moved = false;
    progressAll(moved);
    if (done()) return;
    if (abortRequested()) {
      fail(hoopInvalidUsage, "rank ", rank_, ": ", operation_, " was aborted (hoopCommAbort)");
    }
    if (moved) {
      spinUntil = Clock::now() + config_.spinBeforeSleep;
      yields = 0;
      continue;
    }
    auto now = Clock::now();
    if (now >= deadline_) {
      fail(hoopTimeout, "rank ", rank_, ": ", operation_, " timed out after ",
           std::chrono::duration_cast<std::chrono::seconds>(config_.opTimeout).count(),
           " s waiting for ", waitingFor(),
           "; that rank may have hung, died, or called a different operation (HOOP_TIMEOUT)");
    }
    // Spin first (the answer is usually microseconds away), then give the core to others
    // (ranks may outnumber cores), then sleep in the kernel until a socket is ready.
    if (now < spinUntil) {
      for (int i = 0; i < 16; ++i) HOOP_CPU_RELAX();
      continue;
    }
    if (yields < 4) {
      ++yields;
      std::this_thread::yield();
      continue;
    }
    pollFds_.clear();
    pollFds_.push_back({wakeup_.get(), POLLIN, 0});
    for (Connection* c : active_) c->addWaitFds(pollFds_);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - now).count();
    int timeoutMs = static_cast<int>(std::clamp<long long>(left, 1, 100));
    if (::poll(pollFds_.data(), pollFds_.size(), timeoutMs) < 0 && errno != EINTR) {
      fail(hoopSystemError, "rank ", rank_, ": poll: ", errnoText(errno));
    }
    spinUntil = Clock::now() + config_.spinBeforeSleep / 4;
  }
}

void Communicator::noteSchedule(OpKind kind, const char* schedule, size_t bytes) {
  auto choice = std::make_pair(kind, schedule);
  if (std::find(announcedSchedules_.begin(), announcedSchedules_.end(), choice) !=
      announcedSchedules_.end()) {
    return;
  }
  announcedSchedules_.push_back(choice);
  log(LogLevel::kInfo, LogSubsys::kColl, rank_, opKindName(kind), " uses ", schedule, " (first at ",
      bytes, " bytes, ", size(), " ranks on ", hostCount_, " host(s))");
}

char* Communicator::scratch(size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_.data();
}

void Communicator::requestAbort() {
  abort_.store(true, std::memory_order_release);
  uint64_t one = 1;
  if (write(wakeup_.get(), &one, sizeof(one)) < 0) {
    // The flag alone still stops every wait within its 100 ms poll slice.
  }
}

}  // namespace hoop
