// ShmConnection's eager messages (see shm_connection.h): one descriptor line and the data, in
// one of two buffers per direction.
#include <cstring>

#include "base/error.h"
#include "transport/shm/shm_connection.h"

namespace hoop {

bool ShmConnection::tryEagerSend(const void* data, const EagerCall& call) {
  if (call.bytes > ShmLayout::kEagerBytes) {
    fail(hoopInternalError, "rank ", selfRank_, ": eager message of ", call.bytes, " bytes to ",
         peer_, " exceeds ", ShmLayout::kEagerBytes);
  }
  const uint64_t number = eagerSent_ + 1;
  // Its buffer last carried message number - 2: the peer must have read that one. The count on
  // its own messages usually says so already; ask its control block only when it does not.
  if (number > 2 && peerEagerReadSeen_ < number - 2) {
    // Acquire: pairs with the release in releaseEager(), so its reads are over before we write.
    peerEagerReadSeen_ = std::max(
        peerEagerReadSeen_, peerControl().eagerConsumed.value.load(std::memory_order_acquire));
    if (peerEagerReadSeen_ < number - 2) return false;
  }
  ShmEagerDescriptor& descriptor = layout_.eagerDescriptor(side_, number);
  if (call.bytes > 0) std::memcpy(layout_.eagerData(side_, number), data, call.bytes);
  descriptor.consumed = eagerRead_;
  descriptor.count = call.count;
  descriptor.bytes = call.bytes;
  descriptor.seq = call.tag.seq;
  descriptor.kind = static_cast<uint8_t>(call.tag.kind);
  descriptor.type = static_cast<uint8_t>(call.type);
  descriptor.op = static_cast<uint8_t>(call.op);
  // Release: the data and the fields above are visible no later than the number that announces
  // them. The descriptor shares its line with nothing the reader writes.
  descriptor.number.store(number, std::memory_order_release);
  eagerSent_ = number;
  // The wake-up's fence waits until these stores reach the peer's core; finished later (see
  // finishWakeUp), that wait overlaps this rank's wait for the peer's own message.
  notifyPeer();
  return true;
}

const void* ShmConnection::peekEager(const EagerCall& call) {
  const uint64_t number = eagerRead_ + 1;
  const int sender = 1 - side_;
  if (eager_.held) return layout_.eagerData(sender, number);
  const ShmEagerDescriptor& descriptor = layout_.eagerDescriptor(sender, number);
  // Acquire: pairs with the sender's release of `number`, making the data and fields visible.
  if (descriptor.number.load(std::memory_order_acquire) != number) {
    if (!eager_.wanted) idle_ = false;  // a new wait starts its own liveness clock
    eager_.wanted = true;
    eager_.call = call;
    checkPeerWhileIdle();
    return nullptr;
  }
  if (descriptor.kind != static_cast<uint8_t>(call.tag.kind) || descriptor.seq != call.tag.seq ||
      descriptor.type != static_cast<uint8_t>(call.type) ||
      descriptor.op != static_cast<uint8_t>(call.op) || descriptor.count != call.count ||
      descriptor.bytes != call.bytes) {
    failEagerMismatch(descriptor, call);
  }
  peerEagerReadSeen_ = std::max(peerEagerReadSeen_, descriptor.consumed);
  // The call itself matters only while waiting (for a mismatch message): keep the hot path to
  // the tag.
  eager_.wanted = false;
  eager_.held = true;
  eager_.call.tag = call.tag;
  idle_ = false;
  return layout_.eagerData(sender, number);
}

void ShmConnection::releaseEager() {
  if (!eager_.held) {
    fail(hoopInternalError, "rank ", selfRank_, ": releaseEager from ", peer_,
         " without a peeked message");
  }
  eager_.held = false;
  // Release: our reads of the buffer are done before the sender can see it free. Few senders
  // ever load this (the count in our next message tells them first), so the store stays cheap.
  self().eagerConsumed.value.store(++eagerRead_, std::memory_order_release);
}

void ShmConnection::failEagerMismatch(const ShmEagerDescriptor& theirs,
                                      const EagerCall& mine) const {
  // Eager messages serve allreduces, which have no root: the peer's is taken as this rank's.
  const CallParams theirCall{theirs.count, theirs.type, theirs.op, mine.tag.call.root};
  fail(hoopInvalidUsage, "rank ", selfRank_, " called ",
       describeCall(mine.tag.kind, mine.tag.seq, mine.params()), " but ", peer_, " called ",
       describeCall(static_cast<OpKind>(theirs.kind), theirs.seq, theirCall),
       ": every rank must call the same collectives in the same order with the same count, "
       "type and op");
}

void ShmConnection::failIfPeerInAnotherCall() const {
  // A rank publishes its messages in call order, and a collective finishes only once its own
  // messages are out. So if the peer's next message on the other path is visible (acquire) while
  // the one awaited here is still not (loaded after it), the peer skipped it: it is in a
  // different call. Loading in that order rules out a message that is merely on its way.
  const ShmEagerDescriptor& nextEager = layout_.eagerDescriptor(1 - side_, eagerRead_ + 1);
  auto eagerArrived = [&] {
    return nextEager.number.load(std::memory_order_acquire) == eagerRead_ + 1;
  };
  auto slotArrived = [&] {
    return peerControl().published.value.load(std::memory_order_acquire) > consumed_;
  };
  if (eager_.wanted && slotArrived() && !eagerArrived()) {
    const ShmSlotHeader header = readInboundHeader();
    const EagerCall& mine = eager_.call;
    const CallParams theirCall{header.callCount, header.callType, header.callOp, header.callRoot};
    fail(hoopInvalidUsage, "rank ", selfRank_, " called ",
         describeCall(mine.tag.kind, mine.tag.seq, mine.params()), " but ", peer_,
         " sent data for ", describeCall(static_cast<OpKind>(header.kind), header.seq, theirCall),
         ": every rank must call the same collectives in the same order");
  }
  const bool waitingForSlot = recvs_.completed < recvs_.posted || peek_.wanted;
  if (waitingForSlot && eagerArrived() && !slotArrived()) {
    const FrameTag mine = recvs_.completed < recvs_.posted
                              ? recvs_.ring[recvs_.completed % kMaxInFlight].tag
                              : peek_.tag;
    // Eager messages serve allreduces, which have no root: the peer's is shown as this rank's.
    const CallParams theirs{nextEager.count, nextEager.type, nextEager.op, mine.call.root};
    fail(hoopInvalidUsage, "rank ", selfRank_, " called ",
         describeCall(mine.kind, mine.seq, mine.call), " but ", peer_, " called ",
         describeCall(static_cast<OpKind>(nextEager.kind), nextEager.seq, theirs),
         ": every rank must call the same collectives in the same order");
  }
}

}  // namespace hoop
