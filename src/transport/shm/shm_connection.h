// A Connection between two processes of one host through a shared-memory segment: per
// direction a ring of fixed-size slots (shm_layout.h). The sender copies a message into free
// slots (several when it is larger than a slot), or writes it into one in place (sendSlot), and
// publishes each; the receiver validates each slot's header against what it posted, copies out
// (or reads in place, peekRecv) and releases the slot. Large messages can go by CMA instead: the
// slot carries only where the bytes are and the receiver reads them straight from the sender's
// buffer (one copy instead of two).
//
// Nothing blocks and the hot path makes no system call: progress() is a few loads and stores of
// shared counters. A caller that wants to sleep uses waitWord() (see announceSleep below).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/capabilities.h"
#include "transport/connection.h"
#include "transport/shm/peer_process.h"
#include "transport/shm/shm_layout.h"
#include "transport/shm/shm_segment.h"

namespace hoop {

class ShmConnection : public Connection,
                      public InPlaceReceive,
                      public DirectSend,
                      public EagerMessages {
 public:
  // What connectShm agreed with the peer.
  struct Setup {
    ShmSegment segment;
    size_t slots = 0;
    size_t slotBytes = 0;
    int side = 0;  // 0: this process created the segment (the lower rank)
    int selfRank = -1;
    std::string peer;  // "rank 3 (host:pid)": names the peer in errors
    PeerProcess peerProcess;
    // CMA per direction: the sender uses it for messages of at least its threshold when the
    // receiver proved at setup that it can read the sender's memory.
    bool sendViaCma = false;
    size_t sendCmaThresholdBytes = 0;
    bool recvViaCma = false;
    size_t peerCmaThresholdBytes = 0;
    std::chrono::milliseconds livenessInterval{10};
    size_t spreadBytes = 0;  // ShmOptions::spreadBytes
  };

  explicit ShmConnection(Setup setup);
  // Tells the peer this end is gone (it fails instead of waiting for the operation timeout).
  ~ShmConnection() override;
  ShmConnection(const ShmConnection&) = delete;
  ShmConnection& operator=(const ShmConnection&) = delete;

  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override;
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override;
  uint64_t sendsCompleted() const override { return sends_.completed; }
  uint64_t recvsCompleted() const override { return recvs_.completed; }
  uint64_t sendsPosted() const override { return sends_.posted; }
  uint64_t recvsPosted() const override { return recvs_.posted; }
  size_t maxInFlight() const override { return kMaxInFlight; }
  // Finishes the wake-up owed to the peer (finishWakeUp) when it moved anything, or when one has
  // been owed for kIdlePassesBeforeWakeUp passes.
  bool progress() override;
  // No descriptors; for shared memory this call means "I am about to sleep": see waitWord(). It
  // first finishes any wake-up owed to the peer.
  void addWaitFds(std::vector<pollfd>& fds) override;
  // This side's futex word; the peer bumps it after every publish into our inbound ring and
  // every release in our outbound ring, and FUTEX_WAKEs it (shared) only when we announced a
  // sleep through addWaitFds(). Sleep protocol, free of lost wake-ups:
  //   uint32_t seen = waitWord()->load(acquire);   // before the progress() pass that found
  //   ... progress() moved nothing ...             //   nothing to do
  //   addWaitFds(fds);                             // announces the sleeper (a full fence)
  //   futexWaitShared(*waitWord(), seen, timeout); // returns at once if the word moved since
  //   progress();                                  // ends the announcement, woken or not
  const std::atomic<uint32_t>* waitWord() const override { return &self().wake.value; }

  // Zero-copy receive: reduce straight out of the slot instead of copying the message out.
  //
  // canPeek(bytes): whether a message of `bytes` from this peer travels whole in one slot (not
  // split, not by CMA), the condition for peekRecv to ever succeed.
  // peekRecv(bytes, tag): the next inbound message, in place. Requires canPeek(bytes) and no
  // posted receive still pending (messages are consumed in order). Returns nullptr while the
  // message has not arrived; then a pointer to its `bytes` bytes (64-byte aligned) that stays
  // valid and unchanged until releasePeeked(). The header is checked exactly as postRecv's (same
  // errors). Calling it again before releasePeeked() returns the same pointer. Like progress(),
  // it throws when the peer is gone.
  // releasePeeked(): hands the slot back to the sender. The message counts as one receive:
  // recvsPosted() and recvsCompleted() both advance, so tickets keep matching the peer's sends.
  bool canPeek(size_t bytes) const override;
  std::optional<FrameTag> peekUnclaimed() override;
  const void* peekRecv(size_t bytes, FrameTag tag) override;
  void releasePeeked() override;
  InPlaceReceive* inPlaceReceive() override { return this; }

  // Zero-copy send: the caller writes a message straight into the next outbound slot, so a
  // reduction can put its result there in the pass that computes it (no copy in afterwards).
  //
  // sendSlot(bytes): where the next message goes, when one of `bytes` can go there now: it
  // travels whole in one slot (not split, not by CMA), no earlier send still waits for a slot
  // (messages leave in order), and that slot is free. Else nullptr: post the send instead. The
  // pointer is 64-byte aligned and the slot stays this side's until publishSend.
  // publishSend(bytes, tag): hands the message written at sendSlot(bytes) to the peer. It counts
  // as one send, posted and complete at once (tickets keep matching the peer's receives), and
  // returns its ticket. Nothing may be posted between the two calls.
  void* sendSlot(size_t bytes) override;
  uint64_t publishSend(size_t bytes, FrameTag tag) override;
  DirectSend* directSend() override { return this; }

  bool idle() const override { return !workPending(); }

  // Eager messages, for schedules that trade one small message each way per call (the one-shot
  // allreduce). A message of at most ShmLayout::kEagerBytes goes whole into one of two buffers
  // per direction, described by one line (ShmEagerDescriptor) that also says which call it
  // belongs to, and the reader uses it in place: one cache-line handshake instead of a slot's
  // header, counters and copies. Message n uses buffer n % 2, so it may be written only once the
  // reader has finished with message n - 2; each message carries its writer's read count, so in
  // an exchange that is known without asking.
  EagerMessages* eagerMessages() override { return this; }
  size_t eagerMaxBytes() const override { return ShmLayout::kEagerBytes; }
  // Writes the next eager message and returns true, or returns false at once while its buffer
  // still holds a message the peer has not read (progress elsewhere, then call again). A sent
  // message leaves its wake-up owed: call finishWakeUp() once the exchange is over, before
  // returning from the call (waiting through progress() or addWaitFds() finishes it too).
  bool tryEagerSend(const void* data, const EagerCall& call) override;
  // Every message and release ends in a wake-up of the peer in two halves: notifyPeer() bumps its
  // wake word at once, and this, the Dekker check against a sleeping peer (a full fence, then its
  // sleep requests, and FUTEX_WAKE if it asked), may come later. The fence waits until this rank's
  // stores have reached the peer's core, about one cross-core transfer; left to the end of an
  // exchange it overlaps this rank's own wait for the peer instead of adding to every small call (a
  // measurable share of one; docs/design-notes.md). Until it runs, a peer that went to sleep in
  // between is not woken, so it runs before this rank can sleep (addWaitFds) or leave the call, and
  // progress() runs it after a few idle passes. Cheap when nothing is owed.
  void finishWakeUp() override;
  // The next inbound eager message's data, once it has arrived (nullptr before), checked against
  // `call`: a peer in another collective is hoopInvalidUsage naming both calls. The pointer stays
  // valid and unchanged until releaseEager(). Throws, like progress(), when the peer is gone.
  const void* peekEager(const EagerCall& call) override;
  void releaseEager() override;

  // For logs and tests.
  bool sendsViaCma() const { return sendViaCma_; }
  bool recvsViaCma() const { return recvViaCma_; }
  uint64_t cmaSendsCompleted() const { return cmaSends_; }
  uint64_t cmaRecvsCompleted() const { return cmaRecvs_; }
  const std::string& segmentName() const { return segment_.name(); }
  const ShmLayout& layout() const { return layout_; }
  int side() const { return side_; }
  size_t slotBytes() const { return layout_.slotBytes(); }

 private:
  static constexpr size_t kMaxInFlight = 256;

  struct SendOp {
    const char* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
    size_t copied = 0;              // bytes copied into slots so far
    bool viaCma = false;            // travels as one descriptor slot; the receiver reads our buffer
    uint64_t doneWhenReleased = 0;  // CMA: complete once the peer released this many positions
  };
  struct RecvOp {
    char* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
    size_t received = 0;
    uint64_t fragments = 0;
  };
  // One direction's operations in ticket order, in a ring allocated once.
  template <typename Op>
  struct Queue {
    std::vector<Op> ring = std::vector<Op>(kMaxInFlight);
    uint64_t posted = 0;
    uint64_t completed = 0;
    Op& at(uint64_t ticket) { return ring[ticket % kMaxInFlight]; }
  };

  ShmSideControl& self() const { return layout_.side(side_); }
  ShmSideControl& peerControl() const { return layout_.side(1 - side_); }

  bool progressSends();
  // Completes sends in ticket order (see there); true when one completed.
  bool completeSends();
  // A slot header for a message of `bytes` of the call `tag`, at position published_; the caller
  // fills in how the bytes travel (fragment or CMA).
  ShmSlotHeader headerFor(FrameTag tag, size_t bytes) const;
  // Where in the slot of position published_ a fragment of `bytes` goes, and, once it is
  // published there, moving that slot's cursor past it: each slot fills on from where its last
  // fragment ended, within the first spreadBytes_ of its data area (ShmOptions::spreadBytes).
  size_t placeInSlot(size_t bytes) const;
  void advanceSlotCursor(size_t offset, size_t bytes);
  bool progressRecvs();
  // Every cross-process ordering lives in these, named for it: acquire* load the peer's counter
  // with acquire (true when it has released that many positions / a slot is free / a slot has
  // arrived), publishSlot and releaseSlot store ours with release, and the two sleep functions
  // pair full fences.
  bool acquirePeerReleased(uint64_t positions);
  bool acquireOutboundSpace();
  bool acquireInboundSlot();
  void publishSlot();
  void releaseSlot();
  void notifyPeer();
  void announceSleep();
  void endSleep();  // the first progress() after a sleep: see ShmSideControl::state

  ShmSlotHeader readInboundHeader() const;
  void checkHeader(const ShmSlotHeader& header, const RecvOp& op) const;
  [[noreturn]] void failGarbage(const RecvOp& op, const std::string& why) const;
  void receiveViaCma(const ShmSlotHeader& header, RecvOp& op);
  bool workPending() const;
  void checkPeerWhileIdle();
  std::string pendingWork() const;

  ShmSegment segment_;
  ShmLayout layout_;
  int side_;
  int selfRank_;
  std::string peer_;
  PeerProcess peerProcess_;
  bool sendViaCma_;
  size_t sendCmaThreshold_;
  bool recvViaCma_;
  size_t peerCmaThreshold_;

  Queue<SendOp> sends_;
  Queue<RecvOp> recvs_;
  uint64_t sendCursor_ = 0;  // first send not yet fully published
  size_t spreadBytes_;
  std::vector<size_t> slotCursor_;  // per outbound slot: where its next fragment starts

  // Local mirrors of the shared counters. Our own counts are kept here and stored to the segment;
  // the peer's are re-loaded only when the cached value says we must wait, so a sender with free
  // slots or a receiver with published slots touches the peer's cache lines once per batch.
  uint64_t published_ = 0;          // = self().published
  uint64_t peerReleasedSeen_ = 0;   // <= peerControl().released
  uint64_t consumed_ = 0;           // = self().released: next inbound position to read
  uint64_t peerPublishedSeen_ = 0;  // <= peerControl().published
  uint32_t peerSleepRequestsWoken_ = 0;
  bool wakeUpOwed_ = false;      // notifyPeer() ran since the last finishWakeUp()
  bool sleepAnnounced_ = false;  // announceSleep() ran since the last endSleep()
  unsigned idlePassesOwed_ = 0;  // progress() passes that moved nothing while one was owed
  // About a microsecond of a wait's spin: a spinning peer's answer to a small message comes
  // sooner, and a sleeping peer's wake-up waits no longer.
  static constexpr unsigned kIdlePassesBeforeWakeUp = 16;

  struct Peek {
    bool active = false;  // a slot is lent out through peekRecv
    bool wanted = false;  // peekRecv returned nullptr: the caller waits for a message
    const void* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
  } peek_;

  // Liveness: while work is pending and nothing moves, check the peer every interval.
  std::chrono::milliseconds livenessInterval_;
  bool idle_ = false;
  uint32_t idlePasses_ = 0;  // progress passes since idle_ was set
  std::chrono::steady_clock::time_point nextLivenessCheck_{};

  uint64_t cmaSends_ = 0;
  uint64_t cmaRecvs_ = 0;

  // Eager messages: counts this side sent and finished reading, the peer's read count as last
  // seen, and the inbound message a caller waits for or holds.
  [[noreturn]] void failEagerMismatch(const ShmEagerDescriptor& theirs,
                                      const EagerCall& mine) const;
  // While this side waits on one path (eager or slots) and the peer's next message came by the
  // other, the two ranks are in different calls: hoopInvalidUsage naming both, not a hang.
  void failIfPeerInAnotherCall() const;
  uint64_t eagerSent_ = 0;
  uint64_t eagerRead_ = 0;
  uint64_t peerEagerReadSeen_ = 0;
  struct EagerWait {
    bool wanted = false;  // peekEager returned nullptr: a caller waits for it
    bool held = false;    // peekEager returned it: in use until releaseEager
    EagerCall call{};     // the call it waits for, named in a mismatch
  } eager_;
};

}  // namespace hoop
