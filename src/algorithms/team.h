// What a schedule needs of the ranks it runs over: who they are and in what orders, a connection
// to each, a wait that honours the time-out and the abort, staging memory, and the settings the
// schedule choice follows. The communicator (src/core) is the team hoop's collectives run on; the
// algorithms layer sees it only through this class, so schedules, the tuner and the executors
// are built and tested below the core and never reach into its bootstrap or control plane.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/algo_overrides.h"
#include "algorithms/ring.h"
#include "algorithms/schedule_trial.h"
#include "algorithms/tuner.h"
#include "base/function_ref.h"
#include "base/types.h"
#include "device/executor.h"
#include "transport/connection.h"

namespace hoop {

class Team {
 public:
  virtual ~Team() = default;
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
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
  // per CPU on any host.
  double ranksPerCpu() const { return ranksPerCpu_; }
  // The least level-2 cache per CPU any rank reported (0: none did).
  size_t level2BytesPerCpu() const { return level2BytesPerCpu_; }
  // Whether every other rank is reached by a transport that maps its memory (shm, as HOOP_TRANSPORT
  // allows): what schedules that read peers' buffers in place need. The same on every rank.
  bool everyPeerSharesMemory() const { return everyPeerSharesMemory_; }

  // "rank 3 (host b, pid 912)": how messages name a peer.
  virtual std::string describePeer(int rank) const = 0;
  // The peer's host identity: ranks with equal ids share a host.
  virtual uint64_t peerHostId(int rank) const = 0;

  // Every collective takes the next number; ranks must call collectives in the same order, and
  // the number travels with the data so a rank that did not is caught.
  virtual uint32_t nextCollectiveSeq() = 0;
  virtual uint32_t nextSendSeq(int peer) = 0;
  virtual uint32_t nextRecvSeq(int peer) = 0;

  // The connection to `peer`, set up on first use (both ranks must be asking at about the same
  // time, as they are inside a collective or a matched send/recv).
  virtual Connection& connection(int peer) = 0;
  // Sets up several at once: connects first, then accepts, so no order of calls can deadlock.
  virtual void connectAll(const std::vector<int>& peers) = 0;
  // Every other rank, once (later calls return at once).
  virtual void connectEveryone() = 0;
  // True when every send posted on any connection has completed.
  virtual bool allSendsCompleted() const = 0;

  // Starts the clock for one operation's time-out and names it for error messages: `kind` and
  // `seq`, with `count` and `type` for the size (count 0: not shown), and `call` to spot a peer
  // that made a different call.
  virtual void beginOperation(OpKind kind, uint32_t seq, size_t count = 0,
                              DataType type = DataType::kInt8, const CallParams& call = {}) = 0;
  // Drives every connection until done() holds. Throws on abort, on the time-out (naming
  // `waitingFor()`) and on a connection's failure.
  virtual void waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) = 0;
  // Staging memory of `executor`'s kind for received pieces and intermediate results, grown on
  // demand and kept for later calls (one buffer per memory kind). Growing it moves it: take it
  // once per operation, at the largest size the operation needs.
  char* staging(const Executor& executor, size_t bytes);

  // The settings the schedule choice follows (HOOP_CHUNK_SIZE, HOOP_ALGO, HOOP_TUNE_*, the shm
  // ring's depth): every rank has the same (checked at init).
  virtual size_t chunkBytes() const = 0;
  virtual bool chunkSetByUser() const = 0;
  virtual const CostModel& costModel() const = 0;
  virtual const AlgoOverrides& algorithmRules() const = 0;
  virtual size_t shmSlots() const = 0;
  // The cost model this team's choices use from now on: every rank must adopt the same
  // (calibration.h).
  virtual void adoptCostModel(const CostModel& model) = 0;
  // The schedules forced from the next call on (hoopCommSetAlgorithms): every rank must adopt the
  // same. Forgets the remembered choices, which the old rules may have made.
  virtual void adoptAlgorithms(AlgoOverrides algorithms) = 0;

  // Logs at INFO the first time each schedule serves a kind of operation (every call would flood
  // the log; never would hide what the tuner decided). `pieceBytes`: the pipeline piece size the
  // tuner chose (0: none, HOOP_CHUNK_SIZE's).
  void noteSchedule(OpKind kind, const char* schedule, size_t bytes, size_t pieceBytes);
  // Logs at WARN, the first time for each kind of operation and schedule, that the forced rules
  // name a schedule for a call it cannot serve, so hoop's own choice runs it: a user who forced
  // it should not think it ran. `servesOnly`: the calls it can serve, in words.
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
  void forgetScheduleMemos() { scheduleMemos_.fill({}); }

  // The timed choices by kind and size class (schedule_trial.h), created on first use.
  ScheduleTrials& scheduleTrials();
  const ScheduleTrials* scheduleTrialsIfAny() const { return scheduleTrials_.get(); }

 protected:
  Team() = default;
  // The job's shape (ranks, rings, crowding) as `other` knows it: a team over the same ranks.
  void takeShapeOf(const Team& other);

  // Set by the communicator as it learns the job's shape (rendezvous, host grouping).
  int rank_ = 0;
  int size_ = 0;
  int localRank_ = 0;
  int localSize_ = 1;
  int hostCount_ = 1;
  int crossRank_ = 0;
  int crossSize_ = 1;
  double ranksPerCpu_ = 0;  // below 1 where every host has CPUs to spare
  size_t level2BytesPerCpu_ = 0;
  bool everyPeerSharesMemory_ = false;
  Ring ring_;
  Ring localRing_;
  Ring crossRing_;

 private:
  std::array<ScheduleMemo, 16> scheduleMemos_{};
  std::unique_ptr<ScheduleTrials> scheduleTrials_;
  std::array<std::unique_ptr<Staging>, kNumMemoryKinds> staging_;
  std::vector<std::pair<OpKind, const char*>> announcedSchedules_;
  std::vector<std::pair<OpKind, const char*>> unfitForcedSchedules_;  // warned about
};

}  // namespace hoop
