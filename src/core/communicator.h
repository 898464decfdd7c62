// A communicator: this rank's view of the job (peers, ring order, connections) and the wait loop
// every blocking operation runs in.
#pragma once

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/ring.h"
#include "algorithms/schedule_trial.h"
#include "base/error.h"
#include "base/function_ref.h"
#include "base/types.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "core/failure_watch.h"
#include "core/rank_status.h"
#include "topology/transport_choice.h"
#include "transport/connection.h"
#include "transport/shm/futex.h"
#include "transport/shm/shm_connection.h"
#include "transport/tcp/tcp_transport.h"

namespace hoop {

class Communicator {
 public:
  // Collective over all ranks: rendezvous, then connections to the ring neighbours. `root` is
  // the rendezvous this process serves, if any; it is kept until the rendezvous is over.
  // `config`: the settings (hoopCommInitRankConfig's, or the environment's). `announce`, when
  // given, is called with the communicator as soon as requestAbort() can stop its
  // initialisation from another thread, and with nullptr before create() returns or throws.
  static std::unique_ptr<Communicator> create(
      const BootstrapId& id, int nranks, int rank, std::unique_ptr<RootService> root,
      const Config& config = Config::fromEnvironment(),
      const std::function<void(Communicator*)>& announce = nullptr);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return static_cast<int>(peers_.size()); }
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  const PeerInfo& peer(int rank) const { return peers_[rank]; }
  const Config& config() const { return config_; }
  // All ranks in ring order (each host's ranks contiguous), and this rank's place in it.
  const Ring& ring() const { return ring_; }
  // The ranks on this host, and the ranks with this rank's local index on every host. Both are
  // empty unless every host runs the same number of ranks (what hierarchical schedules need).
  const Ring& localRing() const { return localRing_; }
  const Ring& crossRing() const { return crossRing_; }
  int hostCount() const { return hostCount_; }
  // With the hierarchy above (localRing() not empty): the rank with local index `localIndex` on
  // the `host`-th host in ring order.
  int rankAt(size_t host, size_t localIndex) const {
    return ring_.ranks[host * static_cast<size_t>(localSize_) + localIndex];
  }
  // Among the ranks with this rank's local index (one per host that has that many ranks): this
  // rank's place, in host order, and how many there are. Horovod's cross_rank and cross_size.
  int crossRank() const { return crossRank_; }
  int crossSize() const { return crossSize_; }
  // How crowded the CPUs are, the same on every rank (from the rendezvous table): the most ranks
  // per CPU on any host, and the least level-2 cache per CPU any rank reported (0: none did).
  double ranksPerCpu() const { return ranksPerCpu_; }
  size_t level2BytesPerCpu() const { return level2BytesPerCpu_; }

  // Every collective takes the next number; ranks must call collectives in the same order, and
  // the number travels with the data so a rank that did not is caught.
  uint32_t nextCollectiveSeq() { return collectiveSeq_++; }
  uint32_t nextSendSeq(int peer) { return sendSeq_[peer]++; }
  uint32_t nextRecvSeq(int peer) { return recvSeq_[peer]++; }

  // The connection to `peer`, set up on first use (both ranks must be asking at about the same
  // time, as they are inside a collective or a matched send/recv).
  Connection& connection(int peer);
  // The shared-memory connection to `peer` (set up on first use, like connection()), or nullptr
  // when the peer is reached another way.
  ShmConnection* shmConnection(int peer);
  // Whether every other rank is on this host and reached over shared memory (HOOP_TRANSPORT
  // allowing): what schedules that read peers' buffers in place need. Same on every rank of a
  // single-host job.
  bool everyPeerOverShm() const { return everyPeerOverShm_; }
  // Sets up several at once: connects first, then accepts, so no order of calls can deadlock.
  void connectAll(const std::vector<int>& peers);
  // Every other rank, once (later calls return at once).
  void connectEveryone();
  // True when every send posted on any connection has completed.
  bool allSendsCompleted() const;

  // Starts the clock for one operation's HOOP_TIMEOUT; describes it for error messages.
  // `kind` and `seq` name it; `count` and `type` add the size (count 0: not shown). Kept as
  // values and turned into text only for an error: this runs on every call.
  // `call`: the collective's parameters as its messages carry them, to spot a peer that made a
  // different call (failIfAPeerCalledSomethingElse).
  void beginOperation(OpKind kind, uint32_t seq, size_t count = 0, DataType type = DataType::kInt8,
                      const CallParams& call = {});
  // "allreduce #12 (1024 x float)", for messages.
  std::string operation() const { return watch_.operation().describe(); }
  // Drives every connection until done() holds: spins briefly, then sleeps in poll. Throws on
  // abort, timeout (naming `waitingFor()`, with the hang report: see hang_report.h), or a
  // connection failure. Answers other ranks' status queries while it waits.
  void waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor);
  // What this rank would answer a status query now.
  RankStatus status() const { return watch_.status(); }
  // Called with the error an operation failed with, before it is returned; gives back the error
  // to return. When the cause is this rank's own discovery (a peer died or a connection was lost,
  // a mismatched call was read: codes noticeCarries() accepts), every other rank is sent a
  // failure notice first (at most kNoticeSendTime), so it fails too and names the cause. A
  // failure caused by a notice, an abort, a timeout (every rank has its own, with its hang
  // report) or a notice already waiting here is not passed on: no storms.
  Error shareFailure(const Error& error) { return watch_.shareFailure(error); }
  // Between operations: looks at the listener for a failure notice (no wait) and returns the
  // error it makes, if one came. What hoopCommGetAsyncError asks a rank whose part of a call was
  // done before another rank found it wrong (a broadcast root).
  std::optional<Error> failureNoticed() { return watch_.failureNoticed(); }

  // Logs at INFO the first time each schedule serves a kind of operation on this communicator
  // (every call would flood the log; never would hide what the tuner decided).
  // `pieceBytes`: the pipeline piece size the tuner chose (0: none, HOOP_CHUNK_SIZE's).
  void noteSchedule(OpKind kind, const char* schedule, size_t bytes, size_t pieceBytes);
  // Logs at WARN, the first time for each kind of operation and schedule, that the forced rules
  // (HOOP_ALGO, config->algorithms or hoopCommSetAlgorithms) name a schedule for a call it cannot
  // serve, so hoop's own choice runs it: a user who forced it should not think it ran.
  // `servesOnly`: the calls it can serve, in words.
  void noteForcedScheduleUnfit(OpKind kind, const char* schedule, size_t bytes,
                               std::string_view servesOnly);

  // The schedule last chosen for each kind of collective, with the size it was chosen for:
  // repeated calls of one size (a training loop) skip the choice. Opaque here; the dispatcher
  // knows what they point to.
  struct ScheduleMemo {
    size_t bytes = SIZE_MAX;
    const void* schedule = nullptr;
    size_t pieceBytes = 0;
    void* watch = nullptr;  // the settled class that counts these calls, if one does
  };
  ScheduleMemo& scheduleMemo(OpKind kind) { return scheduleMemos_[static_cast<size_t>(kind)]; }

  // The timed choices by kind and size class (algorithms/schedule_trial.h), created on first use.
  ScheduleTrials& scheduleTrials();
  const ScheduleTrials* scheduleTrialsIfAny() const { return scheduleTrials_.get(); }

  // Staging memory for received pieces, grown on demand and kept for later calls. Growing it
  // moves it: take it once per operation, at the largest size the operation needs.
  char* scratch(size_t bytes);

  // The cost model this communicator's choices use from now on: every rank must adopt the same
  // (calibration.h).
  void adoptCostModel(const CostModel& model) { config_.costModel = model; }
  // The schedules forced from the next call on (hoopCommSetAlgorithms): every rank must adopt the
  // same. Forgets the remembered choices, which the old rules may have made.
  void adoptAlgorithms(AlgoOverrides algorithms) {
    config_.algorithms = std::move(algorithms);
    scheduleMemos_.fill({});
  }

  // From any thread: wakes every wait on this communicator, which then throws.
  void requestAbort();
  bool abortRequested() const { return abort_.load(std::memory_order_acquire); }
  // Held by every operation; hoopCommAbort takes it after requestAbort() to know all have left.
  std::mutex& operationMutex() { return operationMutex_; }

 private:
  Communicator() = default;
  // Host grouping from the peers' host ids: local rank and size, and the three rings.
  void buildRings();
  // Reads the CPUs each host's ranks share (ranksPerCpu_, level2BytesPerCpu_). Oversubscribed
  // hosts get no spinning in waits (config_.spinBeforeSleep) and keep each shm message at its
  // slot's start (config_.shm.spreadBytes).
  void adaptToCores();
  void progressAll(bool& moved);
  // Loads every busy shm connection's futex word (wordSnapshot_) for a following sleep.
  void snapshotWaitWords();
  // Builds the shared-memory connection to `peer` over its TCP connection.
  void setUpShm(int peer);
  // Sleeps until a connection may move (socket ready, futex word changed), the abort, or
  // `timeoutMs`.
  void sleepUntilActivity(int timeoutMs);

  int rank_ = 0;
  int localRank_ = 0;
  int localSize_ = 1;
  int hostCount_ = 1;
  bool everyPeerOverShm_ = false;
  int crossRank_ = 0;
  int crossSize_ = 1;
  double ranksPerCpu_ = 0;  // below 1 where every host has CPUs to spare
  size_t level2BytesPerCpu_ = 0;
  Config config_;
  std::vector<PeerInfo> peers_;
  Ring ring_;
  Ring localRing_;
  Ring crossRing_;
  // Status queries, failure notices, mismatches seen in unclaimed messages, the hang report.
  // Declared before tcp_, which calls into it from the listener, so that it outlives tcp_.
  FailureWatch watch_;
  std::unique_ptr<TcpTransport> tcp_;
  TransportPolicy transportPolicy_;
  // By peer rank, null until used: the TCP connection (for shm peers only their setup channel)
  // and the shared-memory one where the peer is on this host.
  std::vector<std::unique_ptr<Connection>> tcpConnections_;
  std::vector<std::unique_ptr<ShmConnection>> shmConnections_;
  std::vector<Connection*> connections_;  // the one that carries data, by peer rank
  std::vector<Connection*> active_;       // every connection that exists, for progress
  bool connectedToEveryone_ = false;
  // Shared-memory connections' futex words as seen before the last progress pass.
  std::vector<FutexWatch> wordSnapshot_;
  uint32_t collectiveSeq_ = 0;
  std::vector<uint32_t> sendSeq_;
  std::vector<uint32_t> recvSeq_;
  // HOOP_TIMEOUT's end for the current operation; kNoDeadlineYet until deadline() first runs.
  static constexpr Clock::time_point kNoDeadlineYet = Clock::time_point::max();
  Clock::time_point deadline();
  Clock::time_point deadline_{};
  std::vector<char> scratch_;
  std::array<ScheduleMemo, 16> scheduleMemos_{};
  std::unique_ptr<ScheduleTrials> scheduleTrials_;
  std::vector<std::pair<OpKind, const char*>> announcedSchedules_;
  std::vector<std::pair<OpKind, const char*>> unfitForcedSchedules_;  // warned about
  std::vector<pollfd> pollFds_;
  std::atomic<bool> abort_{false};
  UniqueFd wakeup_;  // eventfd written by requestAbort
  std::mutex operationMutex_;
};

}  // namespace hoop
