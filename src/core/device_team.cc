#include "core/device_team.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include "base/error.h"
#include "base/logging.h"
#include "core/communicator.h"
#include "core/premultiply.h"
#include "transport/cuda_ipc/device_setup.h"
#include "transport/device_staging/staged_setup.h"

namespace hoop {
namespace {

// Enough slots that a pipelined schedule keeps pieces in flight to each peer while the
// receiver works on earlier ones.
constexpr size_t kDeviceSlots = 4;

// A device call returns before its work runs: timing it would time the enqueueing.
CostModel withoutTiming(CostModel model) {
  model.trial = false;
  model.calibrate = false;
  model.watchCalls = 0;
  return model;
}

}  // namespace

DeviceSlotShape deviceSlotShape(size_t chunkBytes) {
  return {kDeviceSlots, std::max(chunkBytes, kOneShotMaxBytes)};
}

DeviceTeam::DeviceTeam(Communicator& comm, DeviceRuntime& runtime)
    : comm_(comm),
      runtime_(runtime),
      costModel_(withoutTiming(comm.costModel())),
      shape_(deviceSlotShape(comm.chunkBytes())),
      queue_(runtime),
      executor_(runtime, nullptr, &queue_),
      premultiplied_(executor_.newStaging()),
      connections_(static_cast<size_t>(comm.size())),
      watch_(runtime, comm.config().opTimeout, comm.rank()) {
  takeShapeOf(comm);
  for (int peer = 0; peer < size_; ++peer) spansHosts_ |= peerHostId(peer) != peerHostId(rank_);
  // Every peer's device slots are mapped here (CUDA IPC) when all share this host: the schedules
  // that read peers' data in place may run. Staged connections offer no such path.
  everyPeerSharesMemory_ = comm.size() > 1 && !spansHosts_;
  watch_.listenForNotices([this]() -> std::optional<Error> {
    // Only between the communicator's operations: the notices arrive where they wait.
    std::unique_lock lock(comm_.operationMutex(), std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    return comm_.failureNoticed();
  });
}

DeviceTeam::~DeviceTeam() {
  // The connections' memory may still be used by work on the streams: let it finish, and where
  // it cannot (an abort, a peer gone), release its waits first.
  const auto limit = comm_.config().opTimeout;
  bool drained = !comm_.abortRequested() && watch_.drainWithin(limit, /*release=*/false);
  if (!drained) drained = watch_.drainWithin(limit, /*release=*/true);
  if (!drained) {
    // Freeing memory a stream may still touch would corrupt whatever reuses it: keep it.
    log(LogLevel::kWarn, LogSubsys::kColl, rank_,
        "device work of this communicator still runs at its destruction; its device "
        "connections' memory is left allocated");
    for (auto& connection : connections_) static_cast<void>(connection.release());
  }
  if (staging_) staging_->stop();
  watch_.stop();
  connections_.clear();
  if (lastCallDone_ != nullptr) runtime_.destroyEvent(lastCallDone_);
}

Executor& DeviceTeam::beginCall(DeviceStream stream) {
  if (std::optional<Error> failure = watch_.checkPeers()) throw *failure;
  if (spansHosts_ && runtime_.capturing(stream)) {
    fail(hoopInvalidUsage, "rank ", rank_,
         ": a call on device memory of a communicator with ranks on other hosts cannot be "
         "captured in a graph (its messages to them are staged by a host thread, which a "
         "replay does not run)");
  }
  // Neither end of that order may be a stream being captured: an event of outside work cannot
  // join a capture, and waiting on a capture's event would pull the new stream into it.
  if (anyCall_ && stream != lastStream_ && !runtime_.capturing(stream) &&
      !runtime_.capturing(lastStream_)) {
    runtime_.recordEvent(lastCallDone_, lastStream_);
    runtime_.streamWaitEvent(stream, lastCallDone_);
  }
  if (lastCallDone_ == nullptr) lastCallDone_ = runtime_.createEvent();
  anyCall_ = true;
  lastStream_ = stream;
  queue_.bind(stream);
  executor_.rebind(stream);
  return executor_;
}

bool DeviceTeam::allSendsCompleted() const {
  queue_.joinSends();
  return true;
}

void DeviceTeam::endCall() {
  queue_.joinSends();
  // The watch counts the call finished when the stream gets here.
  runtime_.addToCounter(watch_.counterOnDevice(), lastStream_);
  watch_.callEnqueued(comm_.operation());
  if (staging_) staging_->wake();
}

void DeviceTeam::abandonCall(const Error& error) {
  // Part of the call may be on the streams, waiting for peers that will never match it: the
  // watch releases those waits until the streams pass the call's end.
  try {
    endCall();
  } catch (const Error&) {
    // Enqueueing the end failed too: the watch still fails the work enqueued before.
  }
  watch_.failWith(error);
}

void DeviceTeam::finishEnqueuedWork() {
  // The watch ends work that cannot finish (a dead peer, HOOP_TIMEOUT) by releasing its waits, so
  // the streams drain in any case; the bound below is only a backstop.
  constexpr auto kPoll = std::chrono::milliseconds(50);
  const auto end = Clock::now() + 2 * comm_.config().opTimeout;
  while (!watch_.drainWithin(kPoll, /*release=*/false)) {
    if (comm_.abortRequested()) {
      fail(hoopRemoteError, "rank ", rank_, ": aborted while waiting for device work to finish");
    }
    if (Clock::now() >= end) {
      fail(hoopTimeout, "rank ", rank_,
           ": device work of this communicator did not finish within twice HOOP_TIMEOUT");
    }
  }
  if (std::optional<Error> failure = watch_.failure()) throw *failure;
}

std::string DeviceTeam::describePeer(int rank) const { return comm_.describePeer(rank); }
uint64_t DeviceTeam::peerHostId(int rank) const { return comm_.peerHostId(rank); }
uint32_t DeviceTeam::nextCollectiveSeq() { return comm_.nextCollectiveSeq(); }
uint32_t DeviceTeam::nextSendSeq(int peer) { return comm_.nextSendSeq(peer); }
uint32_t DeviceTeam::nextRecvSeq(int peer) { return comm_.nextRecvSeq(peer); }

Connection& DeviceTeam::connection(int peer) {
  if (connections_[static_cast<size_t>(peer)] == nullptr) connectAll({peer});
  return *connections_[static_cast<size_t>(peer)];
}

void DeviceTeam::connectAll(const std::vector<int>& peers) {
  std::vector<int> missing;
  for (int peer : peers) {
    if (peer != rank_ && connections_[static_cast<size_t>(peer)] == nullptr) {
      missing.push_back(peer);
    }
  }
  // A group may name a peer more than once (a send and a receive): connect it once.
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (missing.empty()) return;
  // The setup rides the pairs' host connections, made first (and in their own safe order).
  comm_.connectAll(missing);
  // One pair after another in one global order (lower rank, then higher), as the host
  // connections' setup does: no rank waits on a peer that waits on a third that waits on it.
  std::sort(missing.begin(), missing.end(), [this](int a, int b) {
    return std::make_pair(std::min(rank_, a), std::max(rank_, a)) <
           std::make_pair(std::min(rank_, b), std::max(rank_, b));
  });
  for (int peer : missing) {
    if (peerHostId(peer) == peerHostId(rank_)) {
      connectOnThisHost(peer);
    } else {
      connectStagedTo(peer);
    }
  }
}

void DeviceTeam::connectOnThisHost(int peer) {
  std::unique_ptr<SetupChannel> channel = comm_.setupChannelTo(peer);
  std::unique_ptr<DeviceConnection> connection =
      connectDevice(comm_.pairWith(peer), *channel, shape_, queue_);
  watch_.watchConnection(connection->hostFlags(), connection->hostFlagCount(),
                         {comm_.peer(peer).pid, describePeer(peer)}, &connection->ledger());
  connections_[static_cast<size_t>(peer)] = std::move(connection);
}

void DeviceTeam::connectStagedTo(int peer) {
  std::unique_ptr<SetupChannel> channel = comm_.setupChannelTo(peer);
  const StagedLinkAddresses addresses{comm_.peer(rank_).listenAddress,
                                      comm_.peer(peer).listenAddress};
  std::unique_ptr<StagedDeviceConnection> connection = connectStaged(
      comm_.pairWith(peer), *channel, addresses, shape_.slots, shape_.slotBytes, queue_,
      Clock::now() + comm_.config().initTimeout, [this] { return comm_.abortRequested(); });
  // A peer on another host is not a process this one can look at: its death shows as the
  // link's error, which the staging thread hands to the watch.
  watch_.watchConnection(connection->hostFlags(), connection->hostFlagCount(),
                         {0, describePeer(peer)}, nullptr);
  if (!staging_) {
    staging_ = std::make_unique<StagingProgress>([this](const Error& error) {
      watch_.failWith(Error(error.code(), str(error.what(),
                                              "; the waits of the work on device "
                                              "memory were released")));
    });
  }
  staging_->add(*connection);
  connections_[static_cast<size_t>(peer)] = std::move(connection);
}

void DeviceTeam::connectEveryone() {
  if (connectedToEveryone_) return;  // every device call asks
  std::vector<int> everyone;
  for (int r = 0; r < size_; ++r) everyone.push_back(r);
  connectAll(everyone);
  connectedToEveryone_ = true;
}

void DeviceTeam::beginOperation(OpKind kind, uint32_t seq, size_t count, DataType type,
                                const CallParams& call) {
  comm_.beginOperation(kind, seq, count, type, call);
}

void DeviceTeam::waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) {
  comm_.waitUntil(done, waitingFor);
}

size_t DeviceTeam::chunkBytes() const { return comm_.chunkBytes(); }
bool DeviceTeam::chunkSetByUser() const { return comm_.chunkSetByUser(); }
const AlgoOverrides& DeviceTeam::algorithmRules() const { return comm_.algorithmRules(); }
size_t DeviceTeam::shmSlots() const { return shape_.slots; }

void DeviceTeam::adoptCostModel(const CostModel& model) { costModel_ = withoutTiming(model); }

void DeviceTeam::adoptAlgorithms(AlgoOverrides algorithms) {
  comm_.adoptAlgorithms(std::move(algorithms));
  forgetScheduleMemos();
}

namespace {

// The factor as the scale kernel takes it: a pointer to device memory stays one (read in stream
// order); a host one is read now, when the call is enqueued.
ScaleFactor onTheStream(const PreMulFactor& factor, size_t size) {
  ScaleFactor scale;
  switch (factor.source) {
    case PreMulFactor::Source::kValue: scale.value = factor.value; break;
    case PreMulFactor::Source::kHostPointer:
      std::memcpy(scale.value.data(), factor.pointer, size);
      break;
    case PreMulFactor::Source::kDevicePointer: scale.onDevice = factor.pointer; break;
  }
  return scale;
}

}  // namespace

void runDeviceCollective(Communicator& comm, CollectiveArgs args, const PreMulFactor* premultiply) {
  DeviceTeam& team = comm.deviceTeam();
  // Every pair at once, in the one global order, before a schedule asks for its peers one by
  // one: a ring's ranks each asking their next for a blocking setup would wait in a circle.
  team.connectEveryone();
  args.executor = &team.beginCall(args.stream);
  const size_t count = premultiply != nullptr ? premultipliedCount(args, comm.size()) : 0;
  if (count > 0) {
    // On the call's stream after beginCall: behind the previous call, which may still read the
    // scaled input of its own from the same memory, and ahead of every send of this one.
    const size_t size = dataTypeSize(args.type);
    char* scaled = team.premultipliedInput(count * size);
    team.runtime().scale(scaled, args.send, count, args.type, onTheStream(*premultiply, size),
                         args.stream);
    args.send = scaled;
  }
  try {
    runCollective(team, args);
  } catch (const Error& error) {
    team.abandonCall(error);
    throw;
  }
  team.endCall();
}

void runDeviceP2pGroup(Communicator& comm, std::vector<P2pOp> ops, DeviceStream stream) {
  DeviceTeam& team = comm.deviceTeam();
  Executor& executor = team.beginCall(stream);
  for (P2pOp& op : ops) op.executor = &executor;
  try {
    runP2pGroup(team, ops);
  } catch (const Error& error) {
    team.abandonCall(error);
    throw;
  }
  team.endCall();
}

}  // namespace hoop
