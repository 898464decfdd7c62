#include "core/communicator.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <thread>

#include "algorithms/calibration.h"
#include "core/logging.h"
#include "core/rank_affinity.h"
#include "topology/host_cores.h"
#include "topology/host_ranks.h"
#include "transport/shm/futex.h"
#include "transport/shm/shm_setup.h"
#include "transport/tcp/interfaces.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define HOOP_CPU_RELAX() _mm_pause()
#else
#define HOOP_CPU_RELAX() ((void)0)
#endif

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
    return self;
  };
  comm->peers_ =
      rendezvous(id, nranks, rank, describeSelf, deadline, [&] { return comm->abortRequested(); });
  root.reset();  // the rendezvous answered everyone; its thread has ended or ends now
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
  options.socketBufferBytes = comm->config_.socketBufferBytes;
  std::vector<TcpPeer> tcpPeers;
  for (const PeerInfo& p : comm->peers_) tcpPeers.push_back({p.listenAddress, p.describe()});
  comm->tcp_ = std::make_unique<TcpTransport>(options, std::move(listener), std::move(tcpPeers));
  comm->connections_.assign(nranks, nullptr);
  comm->watch_.attach({rank, &comm->peers_, comm->tcp_.get(), &comm->connections_, &comm->abort_,
                       comm->config_.opTimeout});
  comm->transportPolicy_ = TransportPolicy::fromEnv();
  comm->everyPeerOverShm_ =
      comm->hostCount_ == 1 && nranks > 1 && comm->transportPolicy_.allows(TransportKind::kShm);
  comm->tcpConnections_.resize(nranks);
  comm->shmConnections_.resize(nranks);
  comm->sendSeq_.assign(nranks, 0);
  comm->recvSeq_.assign(nranks, 0);

  comm->beginOperation(OpKind::kSetup, 0);
  comm->deadline_ = deadline;
  // The ring neighbours are needed by nearly every collective: connect them now, so a peer
  // that cannot be reached fails initialisation rather than the first collective.
  std::vector<int> neighbours;
  for (const Ring* ring : {&comm->ring_, &comm->localRing_, &comm->crossRing_}) {
    if (ring->size() > 1) neighbours.insert(neighbours.end(), {ring->next(), ring->prev()});
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

bool Communicator::allSendsCompleted() const {
  for (const Connection* c : active_) {
    if (c->sendsCompleted() != c->sendsPosted()) return false;
  }
  return true;
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

void Communicator::beginOperation(OpKind kind, uint32_t seq, size_t count, DataType type,
                                  const CallParams& call) {
  watch_.begin({kind, seq, count, type}, call);
  // The clock starts at the first wait that does not end at once (see deadline()): a small
  // operation that never waits long reads the clock no more than it must.
  deadline_ = kNoDeadlineYet;
}

Clock::time_point Communicator::deadline() {
  if (deadline_ == kNoDeadlineYet) deadline_ = Clock::now() + config_.opTimeout;
  return deadline_;
}

void Communicator::progressAll(bool& moved) {
  for (Connection* c : active_) moved |= c->progress();
}

void Communicator::waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) {
  // The answer is often less than a microsecond away, and reading the clock is not free (tens of
  // nanoseconds in a VM, where it was half of a small allreduce's time): spin on progress alone
  // and read the clock once every kRoundsPerClockRead rounds.
  constexpr unsigned kRoundsPerClockRead = 32;
  const bool spinFirst = config_.spinBeforeSleep.count() > 0;
  constexpr Clock::time_point kNotYet = Clock::time_point::min();
  Clock::time_point spinUntil = kNotYet;  // set at the first clock read of a spin
  // Past spinning: every pass snapshots the shm words first, so a sleep cannot miss a wake-up.
  bool resting = !spinFirst;
  unsigned rounds = 0;
  int yields = 0;
  while (true) {
    if (resting) snapshotWaitWords();
    bool moved = false;
    progressAll(moved);
    if (done()) return;
    if (abortRequested()) {
      fail(hoopInvalidUsage, "rank ", rank_, ": ", operation(), " was aborted (hoopCommAbort)");
    }
    if (moved) {
      spinUntil = kNotYet;
      resting = !spinFirst;
      rounds = 0;
      yields = 0;
      continue;
    }
    if (!resting && ++rounds % kRoundsPerClockRead != 0) {
      HOOP_CPU_RELAX();  // one pause: on some cores it costs ~100 cycles, and it adds to latency
      continue;
    }
    const auto now = Clock::now();
    if (now >= deadline()) watch_.timedOut(waitingFor);
    if (watch_.checkDue(now)) watch_.check(now, waitingFor);
    // Spin first, then give the core to others (ranks may outnumber cores), then sleep in the
    // kernel until something can move.
    if (!resting) {
      if (spinUntil == kNotYet) spinUntil = now + config_.spinBeforeSleep;
      if (now < spinUntil) {
        // Offer the core at every clock read: the kernel sometimes runs two ranks on one core
        // for a while even when there are cores enough, and a rank that spun without yielding
        // would then hold its peer off the core for the whole spin (2 ranks on one core: 55 us
        // a call over shm and 98 over TCP, against 3.5 and 31 with yields; bench/RESULTS.md,
        // twelfth pass). With nothing else to run, a yield is a system call and the spin goes
        // on.
        std::this_thread::yield();
        continue;
      }
      resting = true;  // one more pass, with the words snapshotted, before yielding
      continue;
    }
    if (yields < 4) {
      ++yields;
      std::this_thread::yield();
      continue;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline() - now).count();
    sleepUntilActivity(static_cast<int>(std::clamp<long long>(left, 1, 100)));
    // Woken: something probably moves now; spin a little before resting again.
    spinUntil = Clock::now() + config_.spinBeforeSleep / 4;
    resting = !spinFirst;
    rounds = 0;
  }
}

void Communicator::snapshotWaitWords() {
  // A shared-memory peer wakes a sleeper only if the word moved after this load; so load it
  // before looking for work, and sleep only if it still holds this value.
  wordSnapshot_.clear();
  for (Connection* c : active_) {
    if (const auto* word = c->waitWord(); word != nullptr && !c->idle()) {
      wordSnapshot_.push_back({word, word->load(std::memory_order_acquire)});
    }
  }
}

void Communicator::sleepUntilActivity(int timeoutMs) {
  pollFds_.clear();
  pollFds_.push_back({wakeup_.get(), POLLIN, 0});
  // For shm connections this announces the sleeper, so the peer's next publish wakes it.
  for (Connection* c : active_) c->addWaitFds(pollFds_);
  if (!wordSnapshot_.empty() && pollFds_.size() == 1) {
    // Only shared memory to wait for: sleep on its words. The abort cannot wake a futex, so
    // sleep in slices short enough for hoopCommAbort's 100 ms promise.
    const auto slice = std::chrono::milliseconds(std::min(timeoutMs, 20));
    if (wordSnapshot_.size() == 1) {
      futexWaitShared(*wordSnapshot_.front().word, wordSnapshot_.front().expected, slice);
      return;
    }
    if (futexWaitAnyShared(wordSnapshot_, slice) || errno != ENOSYS) return;
    // A kernel without futex_waitv: fall through to short polls.
  }
  // Sockets and shm words together (or no futex_waitv): poll the sockets, and while shm work
  // is pending wake every millisecond to look at it.
  if (!wordSnapshot_.empty()) timeoutMs = 1;
  if (::poll(pollFds_.data(), pollFds_.size(), timeoutMs) < 0 && errno != EINTR) {
    fail(hoopSystemError, "rank ", rank_, ": poll: ", errnoText(errno));
  }
}

void Communicator::noteSchedule(OpKind kind, const char* schedule, size_t bytes,
                                size_t pieceBytes) {
  auto choice = std::make_pair(kind, schedule);
  if (std::find(announcedSchedules_.begin(), announcedSchedules_.end(), choice) !=
      announcedSchedules_.end()) {
    return;
  }
  announcedSchedules_.push_back(choice);
  log(LogLevel::kInfo, LogSubsys::kColl, rank_, opKindName(kind), " uses ", schedule, " (first at ",
      bytes, " bytes, ", size(), " ranks on ", hostCount_, " host(s)",
      pieceBytes != 0 ? str(", pieces of ", pieceBytes, " bytes") : std::string(), ")");
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
