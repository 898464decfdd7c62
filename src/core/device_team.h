// The team a collective on device memory runs on: the communicator's ranks, orders, settings and
// wait, with device connections in place of the host ones (transport/cuda_ipc on this host,
// transport/device_staging to other hosts) and an executor
// that enqueues kernels on the call's stream. The schedules run on it unchanged; they return once
// the call's work is on the stream, and the stream does the rest.
//
// Calls of one communicator run in call order even on different streams: a call on another
// stream than the one before waits (on the device) for the previous call's stream, since both
// use the same slots and flags. That wait is skipped while a stream is being captured into a
// graph (an event of outside work cannot join a capture): capture on the stream the calls
// before it used. A communicator with ranks on other hosts is not captured at all: its staged
// messages need a host thread to post them at each replay.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/team.h"
#include "core/device_watch.h"
#include "device/device_executor.h"
#include "device/device_runtime.h"
#include "transport/cuda_ipc/device_call_queue.h"
#include "transport/cuda_ipc/device_connection.h"
#include "transport/device_staging/staging_progress.h"

namespace hoop {

class Communicator;

// Slots per direction and bytes per slot of every device connection: a slot holds a whole
// pipeline piece (HOOP_CHUNK_SIZE) and one-shot's largest input.
DeviceSlotShape deviceSlotShape(size_t chunkBytes);

class DeviceTeam final : public Team {
 public:
  DeviceTeam(Communicator& comm, DeviceRuntime& runtime);
  ~DeviceTeam() override;

  // Starts a call on `stream`: orders it after the previous call's work and returns the
  // executor bound to it.
  Executor& beginCall(DeviceStream stream);
  // Ends it: everything the schedule posted goes on the stream.
  void endCall();
  // Ends a call that failed while it was enqueued: the communicator fails with `error`.
  void abandonCall(const Error& error);
  // Where a premultiplied sum's scaled input goes (core/premultiply.h): device memory that grows
  // and keeps what it outgrew, as the schedules' staging does, since calls are ordered one after
  // another on the device and an outgrown buffer may still be read by work on a stream.
  char* premultipliedInput(size_t bytes) { return premultiplied_->reserve(bytes); }
  // Waits until the device has run every call enqueued so far (hoopCommFinalize). Throws the
  // failure that ended them, if one did, and stops early on an abort.
  void finishEnqueuedWork();
  DeviceRuntime& runtime() const { return runtime_; }
  // The error that ended the device work (a dead peer, the time-out), once the watch found one.
  std::optional<Error> failure() const { return watch_.failure(); }

  std::string describePeer(int rank) const override;
  uint64_t peerHostId(int rank) const override;
  uint32_t nextCollectiveSeq() override;
  uint32_t nextSendSeq(int peer) override;
  uint32_t nextRecvSeq(int peer) override;
  Connection& connection(int peer) override;
  void connectAll(const std::vector<int>& peers) override;
  void connectEveryone() override;
  // Joins the send streams into the main stream (device_call_queue.h): from here on the main
  // stream runs behind every send posted so far.
  bool allSendsCompleted() const override;
  void beginOperation(OpKind kind, uint32_t seq, size_t count, DataType type,
                      const CallParams& call) override;
  void waitUntil(FunctionRef<bool()> done, FunctionRef<std::string()> waitingFor) override;
  size_t chunkBytes() const override;
  bool chunkSetByUser() const override;
  // The communicator's model without timing: a device call returns before its work runs, so
  // the trial and the watch would time the enqueueing.
  const CostModel& costModel() const override { return costModel_; }
  const AlgoOverrides& algorithmRules() const override;
  size_t shmSlots() const override;
  void adoptCostModel(const CostModel& model) override;
  void adoptAlgorithms(AlgoOverrides algorithms) override;

 private:
  Communicator& comm_;
  DeviceRuntime& runtime_;
  CostModel costModel_;
  DeviceSlotShape shape_;
  mutable DeviceCallQueue queue_;
  DeviceExecutor executor_;
  std::unique_ptr<Staging> premultiplied_;
  // By peer rank: a DeviceConnection on this host, a StagedDeviceConnection on another.
  std::vector<std::unique_ptr<Connection>> connections_;
  bool spansHosts_ = false;
  // The host thread of the staged connections, made with the first one.
  std::unique_ptr<StagingProgress> staging_;
  // The stream of the last call and an event recorded on it, for the next call's order.
  DeviceStream lastStream_ = nullptr;
  bool anyCall_ = false;
  DeviceEvent lastCallDone_ = nullptr;
  bool connectedToEveryone_ = false;
  DeviceWatch watch_;

  void connectOnThisHost(int peer);
  void connectStagedTo(int peer);
};

// Runs a collective on device memory (args.memory kDevice, args.stream the call's stream): its
// work is enqueued on the stream when this returns. With `premultiply` (a sum), every element of
// the input is first multiplied by that factor, on the stream (core/premultiply.h).
struct PreMulFactor;
void runDeviceCollective(Communicator& comm, CollectiveArgs args,
                         const PreMulFactor* premultiply = nullptr);
// The same for a group's sends and receives, all on `stream`.
void runDeviceP2pGroup(Communicator& comm, std::vector<P2pOp> ops, DeviceStream stream);

}  // namespace hoop
