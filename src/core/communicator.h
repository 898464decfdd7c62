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

#include "algorithms/team.h"
#include "base/error.h"
#include "base/function_ref.h"
#include "base/types.h"
#include "core/bootstrap.h"
#include "core/config.h"
#include "core/control_plane.h"
#include "core/failure_watch.h"
#include "core/rank_status.h"
#include "transport/connection.h"
#include "transport/memory_registry.h"
#include "transport/shm/futex.h"
#include "transport/tcp/tcp_transport.h"
#include "transport/transport_registry.h"

namespace hoop {

class DeviceTeam;

class Communicator final : public Team {
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

  const PeerInfo& peer(int rank) const { return peers_[rank]; }
  const Config& config() const { return config_; }
  uint32_t nextCollectiveSeq() override { return collectiveSeq_++; }
  uint32_t nextSendSeq(int peer) override { return sendSeq_[peer]++; }
  uint32_t nextRecvSeq(int peer) override { return recvSeq_[peer]++; }

  // The connection to `peer`, set up on first use (both ranks must be asking at about the same
  // time, as they are inside a collective or a matched send/recv).
  Connection& connection(int peer) override;
  // Sets up several at once: connects first, then accepts, so no order of calls can deadlock.
  void connectAll(const std::vector<int>& peers) override;
  // Every other rank, once (later calls return at once).
  void connectEveryone() override;
  // True when every send posted on any connection has completed.
  bool allSendsCompleted() const override;

  // Starts the clock for one operation's HOOP_TIMEOUT; describes it for error messages.
  // `kind` and `seq` name it; `count` and `type` add the size (count 0: not shown). Kept as
  // values and turned into text only for an error: this runs on every call.
  // `call`: the collective's parameters as its messages carry them, to spot a peer that made a
  // different call (failIfAPeerCalledSomethingElse).
  void beginOperation(OpKind kind, uint32_t seq, size_t count = 0, DataType type = DataType::kInt8,
                      const CallParams& call = {}) override;
  // "allreduce #12 (1024 x float)", for messages.
  std::string operation() const { return watch_.operation().describe(); }
  // Drives every connection until done() holds: spins briefly, then sleeps in poll. Throws on
  // abort, timeout (naming `waitingFor()`, with the hang report: see hang_report.h), or a
  // connection failure. Answers other ranks' status queries while it waits.
  void waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) override;
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

  std::string describePeer(int rank) const override { return peers_[rank].describe(); }
  uint64_t peerHostId(int rank) const override { return peers_[rank].hostId; }
  // The host name `rank` reported at the rendezvous.
  const std::string& peerHostName(int rank) const { return peers_[rank].hostName; }
  // The address `rank` listens on for its peers (the interface its TCP links use).
  const SocketAddress& peerAddress(int rank) const { return peers_[rank].listenAddress; }
  // The name of the transport that carries (or would carry) data to `peer`: "shm", "tcp", ...
  // The same answer on both ranks of the pair, without connecting.
  std::string transportFor(int peer) const;
  size_t chunkBytes() const override { return config_.chunkBytes; }
  bool chunkSetByUser() const override { return config_.chunkSetByUser; }
  const CostModel& costModel() const override { return config_.costModel; }
  const AlgoOverrides& algorithmRules() const override { return config_.algorithms; }
  size_t shmSlots() const override { return config_.shm.slots; }
  void adoptCostModel(const CostModel& model) override { config_.costModel = model; }
  void adoptAlgorithms(AlgoOverrides algorithms) override {
    config_.algorithms = std::move(algorithms);
    forgetScheduleMemos();
  }

  // The team collectives on device memory run on (device_team.h), made on first use with the
  // process's device runtime.
  DeviceTeam& deviceTeam();
  // The error that ended this communicator's device work, when its watch found one (a dead
  // peer, the time-out): what hoopCommGetAsyncError reports between calls.
  std::optional<Error> deviceFailure() const;
  // A setup exchange with `peer` over its data connection (connected), for transports built
  // beside it, such as the device connections.
  std::unique_ptr<SetupChannel> setupChannelTo(int peer);
  // The pair of this rank and `peer`, as transports see it.
  PeerPair pairWith(int peer) const;
  // The transports this rank's data connections use so far, as "shm" or "shm+tcp" ("" before
  // any): what the timeline shows beside each call.
  const std::string& transportsInUse() const { return transportsInUse_; }

  // Buffers registered with hoopCommRegister: messages between registered buffers travel
  // straight between them where the transport can (rdma).
  MemoryRegistry& registry() { return registry_; }
  // Where a premultiplied sum on host memory puts its scaled input (core/premultiply.h): grown
  // on demand and kept, used under the operation lock.
  Staging& premultipliedInput();
  // Waits until the device has run every call on device memory enqueued so far
  // (hoopCommFinalize); nothing to do for a communicator that made none.
  void finishDeviceWork();

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
  // Builds the data connection to `peer` with `transport`, over the pair's TCP link.
  void connectWith(Transport& transport, int peer);
  // Sleeps until a connection may move (socket ready, futex word changed), the abort, or
  // `timeoutMs`.
  void sleepUntilActivity(int timeoutMs);

  Config config_;
  std::vector<PeerInfo> peers_;
  // Status queries, failure notices, mismatches seen in unclaimed messages, the hang report.
  // Declared before control_, which calls into it from the listener, so that it outlives it.
  FailureWatch watch_;
  // This rank's listener: queries, notices and the arrival of the pairs' TCP links.
  std::unique_ptr<ControlPlane> control_;
  // The pairs' TCP links, which every pair has (they carry the setup of other transports).
  std::unique_ptr<TcpTransport> tcp_;
  TransportPolicy transportPolicy_;
  uint64_t jobTag_ = 0;
  // Before the connections, which look buffers up in it and go first.
  MemoryRegistry registry_;
  // By peer rank, null until used: the pair's TCP link while it only carried the setup of
  // another transport (kept open, idle), and the connection that carries the data.
  std::vector<std::unique_ptr<Connection>> setupLinks_;
  std::vector<std::unique_ptr<Connection>> dataConnections_;
  std::vector<Connection*> connections_;  // dataConnections_, as the failure watch reads them
  std::vector<Connection*> active_;       // every connection that exists, for progress
  bool connectedToEveryone_ = false;
  std::string transportsInUse_;
  // Shared-memory connections' futex words as seen before the last progress pass.
  std::vector<FutexWatch> wordSnapshot_;
  uint32_t collectiveSeq_ = 0;
  std::vector<uint32_t> sendSeq_;
  std::vector<uint32_t> recvSeq_;
  // HOOP_TIMEOUT's end for the current operation; kNoDeadlineYet until deadline() first runs.
  static constexpr Clock::time_point kNoDeadlineYet = Clock::time_point::max();
  Clock::time_point deadline();
  Clock::time_point deadline_{};
  std::vector<pollfd> pollFds_;
  std::atomic<bool> abort_{false};
  UniqueFd wakeup_;  // eventfd written by requestAbort
  std::mutex operationMutex_;
  std::unique_ptr<Staging> premultipliedInput_;
  // After the connections: its connections' setup rode them, and it is gone before they are.
  std::unique_ptr<DeviceTeam> deviceTeam_;
};

}  // namespace hoop
