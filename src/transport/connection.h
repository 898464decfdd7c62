// A connection between this rank and one peer: two ordered message queues, one each way.
// Messages are posted without blocking and complete in posting order per direction; a message's
// buffer belongs to the connection from post until completion. The caller's wait loop moves data
// (progress()) and sleeps on waitFds() when nothing moves, so a blocking collective needs no
// thread hand-off on its critical path.
#pragma once

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/types.h"

namespace hoop {

// What a collective call asked for beyond its kind: carried by every message, so a peer that
// made the same call with another count, type, op or root is told so (hoopInvalidUsage) rather
// than combining mismatched data or moving the wrong bytes. All zero for set-up, barrier and
// point-to-point messages.
struct CallParams {
  uint64_t count = 0;
  uint8_t type = 0;  // DataType
  uint8_t op = 0;    // RedOp
  uint32_t root = 0;

  bool operator==(const CallParams&) const = default;
};

// Carried by every message: which operation it belongs to.
struct FrameTag {
  OpKind kind;
  uint32_t seq;
  CallParams call = {};
};

// "allreduce #5 (1024 x int32, sum)", "broadcast #6 (64 x uint8, root 2)": one side of a
// mismatch, for error messages, with the op and root only where the kind of call has them.
std::string describeCall(OpKind kind, uint32_t seq, const CallParams& call);

// Optional zero-copy paths (capabilities.h).
class InPlaceReceive;
class DirectSend;
class EagerMessages;

class Connection {
 public:
  virtual ~Connection() = default;

  // Tickets count from 0 per direction. Completion is in ticket order.
  virtual uint64_t postSend(const void* data, size_t bytes, FrameTag tag) = 0;
  virtual uint64_t postRecv(void* data, size_t bytes, FrameTag tag) = 0;
  // Number of messages completed in each direction (ticket t is done when t < completed).
  virtual uint64_t sendsCompleted() const = 0;
  virtual uint64_t recvsCompleted() const = 0;
  virtual uint64_t sendsPosted() const = 0;
  virtual uint64_t recvsPosted() const = 0;
  // Most messages in flight per direction; post no more before earlier ones complete.
  virtual size_t maxInFlight() const = 0;

  // Moves what it can without blocking; true when anything moved. Throws hoop::Error naming the
  // peer when the connection fails or a message does not match what was posted.
  virtual bool progress() = 0;
  // Descriptors to sleep on while it has work pending. The caller sleeps next, so a connection
  // may first finish what it owes the peer (a shared-memory wake-up).
  virtual void addWaitFds(std::vector<pollfd>& fds) = 0;
  // Shared-memory transports: a 32-bit word that changes (and is futex-woken) whenever this
  // connection may be able to make progress; nullptr for transports that sleep on fds.
  // To sleep on it: load it (acquire) before the progress() pass that found nothing to do, then
  // call addWaitFds() (which tells the peer a sleeper needs a wake), then FUTEX_WAIT (shared,
  // not private) on the loaded value with a timeout. See ShmConnection::waitWord.
  virtual const std::atomic<uint32_t>* waitWord() const { return nullptr; }

  // The tag of the next inbound message when no posted receive claims it yet and its header has
  // arrived, else nullopt; reads nothing away. A rank waiting on one peer uses it to spot
  // another peer that made a different call (a broadcast's other root: its data lands where
  // nobody waits for it, while this rank waits for data that will never come).
  virtual std::optional<FrameTag> peekUnclaimed() { return std::nullopt; }

  // The zero-copy paths this connection offers (capabilities.h), or nullptr where it has none:
  // a receive read in place, a send written where the peer reads it, small eager messages.
  virtual InPlaceReceive* inPlaceReceive() { return nullptr; }
  virtual DirectSend* directSend() { return nullptr; }
  virtual EagerMessages* eagerMessages() { return nullptr; }

  // Called once the caller saw its sends complete and is about to reuse their buffers: what it
  // does next must come after every send it posted here has read its buffer. Host connections
  // report a send complete only once it has (nothing to do); a device connection reports it
  // complete once it is ordered on a stream, and orders what follows behind it here.
  virtual void fenceSends() {}

  // Nothing posted is unfinished, and nothing else waits on the peer (a transport with more ways
  // to wait than posted messages says so here).
  virtual bool idle() const {
    return sendsCompleted() == sendsPosted() && recvsCompleted() == recvsPosted();
  }
};

}  // namespace hoop
