#include "transport/cuda_ipc/device_connection.h"

#include <utility>

#include "base/error.h"
#include "transport/cuda_ipc/device_slots.h"

namespace hoop {

DeviceConnectionResources::~DeviceConnectionResources() {
  if (runtime == nullptr) return;
  if (flagsOnDevice != nullptr) runtime->unmapHost(flags.data());
  if (peerSlots != nullptr) runtime->closeImported(peerSlots);
  runtime->release(ownSlots);
}

DeviceConnection::DeviceConnection(DeviceCallQueue& queue, int self, int peer,
                                   DeviceSlotShape shape,
                                   std::unique_ptr<DeviceConnectionResources> resources,
                                   std::string peerName)
    : queue_(queue),
      self_(self),
      peer_(peer),
      shape_(shape),
      resources_(std::move(resources)),
      peerName_(std::move(peerName)),
      ledger_(static_cast<char*>(resources_->flags.data()) + resources_->ledgerOffset,
              resources_->lower) {}

void DeviceConnection::recordOutbound(const FrameTag& tag) {
  if (std::optional<FrameTag> theirs = ledger_.recordSend(sendsPosted_, tag)) {
    failMismatch(tag, *theirs);
  }
}

void DeviceConnection::recordInbound(const FrameTag& tag) {
  if (inboundRecorded_ == recvsPosted_) return;
  inboundRecorded_ = recvsPosted_;
  if (std::optional<FrameTag> theirs = ledger_.recordRecv(recvsPosted_, tag)) {
    failMismatch(tag, *theirs);
  }
}

void DeviceConnection::failMismatch(const FrameTag& mine, const FrameTag& theirs) {
  const std::string myCall = describeCall(mine.kind, mine.seq, mine.call);
  const std::string theirCall = describeCall(theirs.kind, theirs.seq, theirs.call);
  // The peer enqueued first and waits on its stream: the record tells its watch.
  ledger_.reportMismatch(myCall, theirCall);
  fail(hoopInvalidUsage, "rank ", self_, " called ", myCall, " on device memory but ", peerName_,
       " called ", theirCall,
       ": every rank must call the same collectives in the same order with the same count, "
       "type and op");
}

uint32_t* DeviceConnection::inboundFlag(size_t slot) const {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(resources_->flagsOnDevice) +
                                     resources_->inboundFlagsOffset + slot * kFlagStride);
}

uint32_t* DeviceConnection::outboundFlag(size_t slot) const {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(resources_->flagsOnDevice) +
                                     resources_->outboundFlagsOffset + slot * kFlagStride);
}

char* DeviceConnection::claimOutboundSlot(DeviceStream stream) {
  runtime().waitFlag(outboundFlag(nextOutbound_), kSlotEmpty | kSlotAborted, stream);
  return resources_->peerSlots + nextOutbound_ * shape_.slotBytes;
}

void DeviceConnection::publishOutboundSlot(DeviceStream stream) {
  runtime().writeFlag(outboundFlag(nextOutbound_), kSlotFull, stream);
  nextOutbound_ = (nextOutbound_ + 1) % shape_.slots;
}

const char* DeviceConnection::awaitInboundSlot() {
  if (!inboundAwaited_) {
    runtime().waitFlag(inboundFlag(nextInbound_), kSlotFull | kSlotAborted, stream());
    inboundAwaited_ = true;
  }
  return resources_->ownSlots + nextInbound_ * shape_.slotBytes;
}

void DeviceConnection::releaseInboundSlot() {
  runtime().writeFlag(inboundFlag(nextInbound_), kSlotEmpty, stream());
  inboundAwaited_ = false;
  nextInbound_ = (nextInbound_ + 1) % shape_.slots;
}

void DeviceConnection::enqueueSendPiece(const char* data, size_t bytes, DeviceStream stream) {
  char* slot = claimOutboundSlot(stream);
  runtime().copy(slot, data, bytes, stream);
  publishOutboundSlot(stream);
}

void DeviceConnection::enqueueRecvPiece(char* data, size_t bytes) {
  const char* slot = awaitInboundSlot();
  runtime().copy(data, slot, bytes, stream());
  releaseInboundSlot();
}

uint64_t DeviceConnection::postSend(const void* data, size_t bytes, FrameTag tag) {
  recordOutbound(tag);
  if (bytes > 0) queue_.postSend(peer_, *this, data, bytes);
  return sendsPosted_++;
}

uint64_t DeviceConnection::postRecv(void* data, size_t bytes, FrameTag tag) {
  if (inboundAwaited_) {
    fail(hoopInternalError, "a receive from ", peerName_, " was posted while one was peeked");
  }
  recordInbound(tag);
  if (bytes > 0) queue_.postRecv(*this, data, bytes);
  return recvsPosted_++;
}

const void* DeviceConnection::peekRecv(size_t bytes, FrameTag tag) {
  if (!canPeek(bytes)) {
    fail(hoopInternalError, "a ", bytes, "-byte receive from ", peerName_,
         " was read in place, but a slot holds ", shape_.slotBytes);
  }
  recordInbound(tag);
  // An empty message takes no slot, whichever path each side uses for it (a posted empty
  // message takes none either).
  if (bytes == 0) {
    peekedEmpty_ = true;
    return resources_->ownSlots;
  }
  // Messages are consumed in order: what the call posted before goes on the stream first.
  queue_.flush();
  return awaitInboundSlot();
}

void DeviceConnection::releasePeeked() {
  if (!peekedEmpty_) releaseInboundSlot();
  peekedEmpty_ = false;
  ++recvsPosted_;
}

bool DeviceConnection::tryEagerSend(const void* data, const EagerCall& call) {
  if (call.bytes > shape_.slotBytes) {
    fail(hoopInternalError, "an eager message of ", call.bytes, " bytes to ", peerName_,
         " is larger than a slot (", shape_.slotBytes, ")");
  }
  recordOutbound(call.tag);
  // On the main stream, not a send stream: the caller may overwrite `data` once every peer's
  // message has arrived (in place), which says nothing of this send having been copied out.
  // One-shot's eager sends wait only for slots the peers freed in their previous call.
  if (call.bytes > 0) {
    queue_.flush();
    enqueueSendPiece(static_cast<const char*>(data), call.bytes, stream());
  }
  ++sendsPosted_;
  return true;
}

const void* DeviceConnection::peekEager(const EagerCall& call) {
  return peekRecv(call.bytes, call.tag);
}

}  // namespace hoop
