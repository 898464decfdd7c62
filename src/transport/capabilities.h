// Optional zero-copy paths a Connection may offer beside its posted messages (connection.h):
// each is a small interface that Connection::inPlaceReceive(), directSend() and eagerMessages()
// return, or nullptr where the transport has no such path. Shared memory offers all three today;
// registered RDMA slots and CUDA IPC device slots can offer the same later, and the schedules
// that use them never learn which transport they talk to.
//
// A capability is the same object as its connection and lives as long as it. Tickets stay one
// sequence per direction: a message moved through a capability counts as one posted and
// completed message, so posted and capability messages may alternate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/types.h"
#include "transport/connection.h"

namespace hoop {

// A receive read where the message lies (the transport's slot) instead of copied out first: a
// reduction reads the peer's data in the pass that combines it.
class InPlaceReceive {
 public:
  // Whether a message of `bytes` from this peer arrives whole in one place, the condition for
  // peekRecv to ever succeed.
  virtual bool canPeek(size_t bytes) const = 0;
  // The next inbound message, in place. Requires canPeek(bytes) and no posted receive still
  // pending (messages are consumed in order). nullptr while the message has not arrived; then a
  // pointer to its `bytes` bytes (64-byte aligned) that stays valid and unchanged until
  // releasePeeked(). The header is checked as a posted receive's is (same errors). Calling it
  // again before releasePeeked() returns the same pointer. Throws when the peer is gone.
  virtual const void* peekRecv(size_t bytes, FrameTag tag) = 0;
  // Hands the place back to the sender; the message counts as one receive.
  virtual void releasePeeked() = 0;

 protected:
  ~InPlaceReceive() = default;
};

// A send written straight where the peer will read it: a reduction puts its result there in the
// pass that computes it, with no copy in afterwards.
class DirectSend {
 public:
  // Where the next message goes, when one of `bytes` can go there now (whole, with no earlier
  // send still queued ahead of it, and the place free); else nullptr: post the send instead.
  // 64-byte aligned; the place stays this side's until publishSend.
  virtual void* sendSlot(size_t bytes) = 0;
  // Hands the message written at sendSlot(bytes) to the peer: one send, posted and complete at
  // once; returns its ticket. Nothing may be posted between the two calls.
  virtual uint64_t publishSend(size_t bytes, FrameTag tag) = 0;

 protected:
  ~DirectSend() = default;
};

// One eager message's call, checked by the reader: a peer in another collective is
// hoopInvalidUsage naming both calls rather than data combined with the wrong call's.
struct EagerCall {
  FrameTag tag;
  DataType type;
  RedOp op;
  size_t count;
  size_t bytes;

  CallParams params() const {
    return {count, static_cast<uint8_t>(type), static_cast<uint8_t>(op), tag.call.root};
  }
};

// Small messages, for schedules that trade one each way per call (the one-shot allreduce): the
// message and its description travel in one handshake and the reader uses it in place, without
// the per-message bookkeeping of posted messages.
class EagerMessages {
 public:
  // The largest message this path carries, the same on both sides of a connection.
  virtual size_t eagerMaxBytes() const = 0;
  // Writes the next message and returns true, or returns false at once while the peer has not
  // yet read the messages ahead of it (progress elsewhere, then call again). A sent message may
  // leave the peer's wake-up owed: call finishWakeUp() once the exchange is over, before leaving
  // the call.
  virtual bool tryEagerSend(const void* data, const EagerCall& call) = 0;
  // The next inbound message's data once it has arrived (nullptr before), checked against
  // `call`. Valid and unchanged until releaseEager(). Throws when the peer is gone.
  virtual const void* peekEager(const EagerCall& call) = 0;
  virtual void releaseEager() = 0;
  // Finishes a wake-up of the peer that the messages above left owed (cheap when none is): left
  // to the end of an exchange, its cost overlaps this rank's own wait instead of adding to it.
  virtual void finishWakeUp() = 0;

 protected:
  ~EagerMessages() = default;
};

}  // namespace hoop
