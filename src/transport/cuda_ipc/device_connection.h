// A connection between two ranks' device memory on one host: each direction a ring of slots in
// the receiver's device memory that the sender maps, with one flag per slot in host shared
// memory (device_slots.h says what each side writes and waits for). Every operation is enqueued
// on the current call's stream (DeviceCallQueue::stream) and nothing waits on the host, so a
// collective on device memory returns once its work is enqueued.
//
// It offers two of the zero-copy paths the schedules use (capabilities.h): a receive read in
// place in the own slot, and eager messages (the same slots, one handshake each), both on the
// call's main stream. Posted messages go through the call's DeviceCallQueue (sends on a stream
// of their own), and a message longer than a slot moves in slot-sized pieces. It offers no
// direct send: a slot claimed on the main stream would hold up everything behind it until the
// peer frees it, which a host schedule never expects of a send.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/device_runtime.h"
#include "transport/capabilities.h"
#include "transport/connection.h"
#include "transport/cuda_ipc/device_call_queue.h"
#include "transport/cuda_ipc/device_ledger.h"
#include "transport/shm/shm_segment.h"

namespace hoop {

// What the two sides agreed at setup: slots per direction and bytes per slot.
struct DeviceSlotShape {
  size_t slots = 0;
  size_t slotBytes = 0;
};

// The device resources of one connection, owned: this rank's receive ring (exported to the
// peer), the peer's ring mapped here, and the flags' host segment registered with the device.
struct DeviceConnectionResources {
  DeviceRuntime* runtime = nullptr;
  char* ownSlots = nullptr;       // allocate()d here
  char* peerSlots = nullptr;      // importMemory()'d from the peer
  ShmSegment flags;               // both directions' flags, mapped here
  void* flagsOnDevice = nullptr;  // mapHost(flags): the address the stream's flag ops take
  size_t inboundFlagsOffset = 0;  // where the peer-to-this-rank direction's flags start
  size_t outboundFlagsOffset = 0;
  size_t ledgerOffset = 0;  // the pair's DeviceLedger, after both directions' flags
  bool lower = false;       // this rank is the lower of the pair

  DeviceConnectionResources() = default;
  DeviceConnectionResources(DeviceConnectionResources&&) = delete;
  ~DeviceConnectionResources();
};

class DeviceConnection final : public Connection,
                               public DeviceSlotLink,
                               public InPlaceReceive,
                               public EagerMessages {
 public:
  DeviceConnection(DeviceCallQueue& queue, int self, int peer, DeviceSlotShape shape,
                   std::unique_ptr<DeviceConnectionResources> resources, std::string peerName);

  // Connection
  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override;
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override;
  // A posted message is complete as soon as it is recorded: whatever the schedule does next on
  // the stream is enqueued behind it (device_call_queue.h).
  uint64_t sendsCompleted() const override { return sendsPosted_; }
  uint64_t recvsCompleted() const override { return recvsPosted_; }
  uint64_t sendsPosted() const override { return sendsPosted_; }
  uint64_t recvsPosted() const override { return recvsPosted_; }
  size_t maxInFlight() const override { return SIZE_MAX; }
  bool progress() override { return false; }
  void addWaitFds(std::vector<pollfd>&) override {}
  void fenceSends() override { queue_.joinSendsTo(peer_); }
  InPlaceReceive* inPlaceReceive() override { return this; }
  EagerMessages* eagerMessages() override { return this; }

  // InPlaceReceive
  bool canPeek(size_t bytes) const override { return bytes <= shape_.slotBytes; }
  const void* peekRecv(size_t bytes, FrameTag tag) override;
  void releasePeeked() override;

  // EagerMessages
  size_t eagerMaxBytes() const override { return shape_.slotBytes; }
  bool tryEagerSend(const void* data, const EagerCall& call) override;
  const void* peekEager(const EagerCall& call) override;
  void releaseEager() override { releasePeeked(); }
  void finishWakeUp() override {}

  // One piece of a posted message, enqueued by the call queue: at most one slot's bytes, a send
  // on `stream`, a receive on the main stream.
  void enqueueSendPiece(const char* data, size_t bytes, DeviceStream stream) override;
  void enqueueRecvPiece(char* data, size_t bytes) override;
  // Both directions' flags as the host sees them, for the abort's release.
  uint32_t* hostFlags() const { return static_cast<uint32_t*>(resources_->flags.data()); }
  size_t hostFlagCount() const { return resources_->ledgerOffset / sizeof(uint32_t); }
  // What both sides enqueued, for the watch: a mismatch the peer found, who lags at a time-out.
  const DeviceLedger& ledger() const { return ledger_; }
  size_t slotBytes() const override { return shape_.slotBytes; }

 private:
  uint32_t* inboundFlag(size_t slot) const;
  uint32_t* outboundFlag(size_t slot) const;
  // Waits (on `stream`) for the next outbound slot to be free and returns it; then hands it over.
  char* claimOutboundSlot(DeviceStream stream);
  void publishOutboundSlot(DeviceStream stream);
  const char* awaitInboundSlot();
  // Records the tag of the next message each way in the ledger; a peer whose message differs
  // fails the call (hoopInvalidUsage naming both calls).
  void recordOutbound(const FrameTag& tag);
  void recordInbound(const FrameTag& tag);
  [[noreturn]] void failMismatch(const FrameTag& mine, const FrameTag& theirs);
  void releaseInboundSlot();
  DeviceStream stream() const { return queue_.stream(); }
  DeviceRuntime& runtime() const { return queue_.runtime(); }

  DeviceCallQueue& queue_;
  int self_;
  int peer_;
  DeviceSlotShape shape_;
  std::unique_ptr<DeviceConnectionResources> resources_;
  std::string peerName_;
  DeviceLedger ledger_;
  uint64_t sendsPosted_ = 0;
  uint64_t recvsPosted_ = 0;
  // The next slot of each ring, and whether the inbound one's wait is already on the stream (a
  // slot read in place, not yet handed back).
  size_t nextOutbound_ = 0;
  size_t nextInbound_ = 0;
  bool inboundAwaited_ = false;
  bool peekedEmpty_ = false;  // the message read in place is empty: no slot to hand back
  // The inbound message whose tag is in the ledger (a peek may be repeated before its release).
  uint64_t inboundRecorded_ = UINT64_MAX;
};

}  // namespace hoop
