#include "transport/shm/shm_connection.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "transport/shm/cma.h"
#include "transport/shm/futex.h"

namespace hoop {

ShmConnection::ShmConnection(Setup setup)
    : segment_(std::move(setup.segment)),
      layout_(segment_.data(), setup.slots, setup.slotBytes),
      side_(setup.side),
      selfRank_(setup.selfRank),
      peer_(std::move(setup.peer)),
      peerProcess_(std::move(setup.peerProcess)),
      sendViaCma_(setup.sendViaCma),
      sendCmaThreshold_(std::max<size_t>(setup.sendCmaThresholdBytes, 1)),
      recvViaCma_(setup.recvViaCma),
      peerCmaThreshold_(std::max<size_t>(setup.peerCmaThresholdBytes, 1)),
      spreadBytes_(std::min(setup.spreadBytes, setup.slotBytes) / kShmCacheLine * kShmCacheLine),
      slotCursor_(setup.slots, 0),
      livenessInterval_(setup.livenessInterval) {}

ShmConnection::~ShmConnection() {
  self().state.closed.store(1, std::memory_order_release);
  notifyPeer();
  finishWakeUp();
}

uint64_t ShmConnection::postSend(const void* data, size_t bytes, FrameTag tag) {
  if (sends_.posted - sends_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many sends in flight to ", peer_);
  }
  SendOp& op = sends_.at(sends_.posted);
  op = SendOp{};
  op.data = static_cast<const char*>(data);
  op.bytes = bytes;
  op.tag = tag;
  op.viaCma = sendViaCma_ && bytes >= sendCmaThreshold_;
  return sends_.posted++;
}

uint64_t ShmConnection::postRecv(void* data, size_t bytes, FrameTag tag) {
  if (recvs_.posted - recvs_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many receives in flight from ", peer_);
  }
  if (peek_.active) {
    fail(hoopInternalError, "rank ", selfRank_, ": postRecv from ", peer_,
         " while a peeked message is still held (call releasePeeked first)");
  }
  RecvOp& op = recvs_.at(recvs_.posted);
  op = RecvOp{};
  op.data = static_cast<char*>(data);
  op.bytes = bytes;
  op.tag = tag;
  return recvs_.posted++;
}

bool ShmConnection::progress() {
  if (sleepAnnounced_) endSleep();
  bool moved = progressSends();
  moved |= progressRecvs();
  if (moved) {
    idle_ = false;
  } else if (workPending()) {
    checkPeerWhileIdle();
  }
  // A pass that published or released finishes its wake-up at once. One left owed by an eager
  // send waits for its exchange to end (see finishWakeUp), but not for more than a few idle
  // passes: a peer asleep on that message cannot answer until it is woken.
  if (moved || (wakeUpOwed_ && ++idlePassesOwed_ >= kIdlePassesBeforeWakeUp)) finishWakeUp();
  return moved;
}

// ---- ring counters and sleep: every cross-process ordering decision is in these functions ----

bool ShmConnection::acquirePeerReleased(uint64_t positions) {
  if (peerReleasedSeen_ >= positions) return true;
  // Acquire: pairs with the peer's release in releaseSlot(), so its reads of those slots (or of
  // our CMA buffer) are finished before we overwrite a slot or report a CMA send complete.
  peerReleasedSeen_ = peerControl().released.value.load(std::memory_order_acquire);
  return peerReleasedSeen_ >= positions;
}

bool ShmConnection::acquireOutboundSpace() {
  // Position published_ reuses the slot of position published_ - slots.
  return published_ < layout_.slots() || acquirePeerReleased(published_ - layout_.slots() + 1);
}

bool ShmConnection::acquireInboundSlot() {
  if (consumed_ < peerPublishedSeen_) return true;
  // Acquire: pairs with the peer's release in publishSlot(), so the header and data of every
  // position below the loaded count are visible before we read them.
  peerPublishedSeen_ = peerControl().published.value.load(std::memory_order_acquire);
  return consumed_ < peerPublishedSeen_;
}

void ShmConnection::publishSlot() {
  // Release: the slot's header and data (plain stores) become visible no later than the count.
  self().published.value.store(++published_, std::memory_order_release);
  notifyPeer();
}

void ShmConnection::releaseSlot() {
  // Release: our reads of the slot (the copy-out, or process_vm_readv from the sender's buffer)
  // are done before the peer can see the position free and overwrite it or reuse its buffer.
  self().released.value.store(++consumed_, std::memory_order_release);
  notifyPeer();
}

void ShmConnection::notifyPeer() {
  std::atomic<uint32_t>& word = peerControl().wake.value;
  // Only this side writes the peer's word, so load + store is a race-free increment without a
  // locked instruction. Bumping it on every event (not only for sleepers) is what lets a waiter
  // load it before its last progress() pass: any event after that load changes the word, and
  // FUTEX_WAIT on the stale value then returns at once.
  word.store(word.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  wakeUpOwed_ = true;
}

void ShmConnection::finishWakeUp() {
  if (!wakeUpOwed_) return;
  wakeUpOwed_ = false;
  idlePassesOwed_ = 0;
  // Dekker handshake with announceSleep(): we stored (count, word) and now read sleepRequests;
  // the sleeper stores sleepRequests then reads the word (in FUTEX_WAIT). With a full fence on
  // each side at least one of us sees the other's store: either its FUTEX_WAIT sees the new word
  // and does not sleep, or we see its request and wake it. No lost wake-up, and no system call
  // unless the peer asked for one. Whatever this rank did between the stores and this fence does
  // not weaken the argument; it only delays the wake of a peer that is already asleep.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const auto& peer = peerControl().state;
  const uint32_t requests = peer.sleepRequests.load(std::memory_order_relaxed);
  if (requests == peerSleepRequestsWoken_) return;
  // One wake per announced sleep, counted only once it woke the peer. A sleeper announces, then
  // enters FUTEX_WAIT on the word as it read it before its last pass; a wake that comes in
  // between finds nobody, and the sleeper still sleeps if it had seen every bump so far. Counted
  // anyway, that wake would have used up the announcement, and the next message's wake-up would
  // have been skipped for good: two sleepers each waiting on what the other sent (the stream
  // test under the thread sanitizer, whose slowness widens that gap, lost one in 3 runs of 6).
  // An announcement whose sleep has ended (the sleeper woke by itself) needs no wake; without
  // that check every message after it would make a system call until the peer slept again.
  if (peer.sleepsEnded.load(std::memory_order_relaxed) == requests) return;
  if (futexWakeShared(peerControl().wake.value) > 0) peerSleepRequestsWoken_ = requests;
}

void ShmConnection::announceSleep() {
  std::atomic<uint32_t>& requests = self().state.sleepRequests;
  requests.store(requests.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  sleepAnnounced_ = true;
  // Pairs with the fence in the peer's finishWakeUp() (see there).
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void ShmConnection::endSleep() {
  // Awake again, whether woken or not: the peer need not wake this announcement any more.
  auto& state = self().state;
  state.sleepsEnded.store(state.sleepRequests.load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
  sleepAnnounced_ = false;
}

void ShmConnection::addWaitFds(std::vector<pollfd>& /*fds*/) {
  // This rank may sleep next: first wake a peer that may be waiting on what we sent.
  finishWakeUp();
  if (workPending()) announceSleep();
}

// ---- sending ----

ShmSlotHeader ShmConnection::headerFor(FrameTag tag, size_t bytes) const {
  ShmSlotHeader header{};
  header.magic = ShmSlotHeader::kMagic;
  header.version = ShmSlotHeader::kVersion;
  header.kind = static_cast<uint8_t>(tag.kind);
  header.seq = tag.seq;
  header.callType = tag.call.type;
  header.callOp = tag.call.op;
  header.callRoot = tag.call.root;
  header.callCount = tag.call.count;
  header.position = published_;
  header.messageBytes = bytes;
  return header;
}

bool ShmConnection::progressSends() {
  bool moved = false;
  while (sendCursor_ < sends_.posted && acquireOutboundSpace()) {
    SendOp& op = sends_.at(sendCursor_);
    ShmSlotHeader header = headerFor(op.tag, op.bytes);
    if (op.viaCma) {
      header.flags = ShmSlotHeader::kViaCma;
      header.cmaAddress = reinterpret_cast<uintptr_t>(op.data);
      op.copied = op.bytes;
      op.doneWhenReleased = published_ + 1;
    } else {
      size_t fragment = std::min(layout_.slotBytes(), op.bytes - op.copied);
      header.fragmentOffset = op.copied;
      header.fragmentBytes = fragment;
      header.dataOffset = placeInSlot(fragment);
      if (fragment > 0) {
        std::memcpy(layout_.data(side_, published_) + header.dataOffset, op.data + op.copied,
                    fragment);
      }
      advanceSlotCursor(header.dataOffset, fragment);
      op.copied += fragment;
    }
    std::memcpy(layout_.header(side_, published_), &header, sizeof(header));
    publishSlot();
    moved = true;
    // A 0-byte message still takes one slot (its header).
    if (op.copied == op.bytes) ++sendCursor_;
  }
  moved |= completeSends();
  return moved;
}

size_t ShmConnection::placeInSlot(size_t bytes) const {
  const size_t cursor = slotCursor_[published_ % layout_.slots()];
  return cursor + bytes <= spreadBytes_ ? cursor : 0;
}

void ShmConnection::advanceSlotCursor(size_t offset, size_t bytes) {
  const size_t end = roundUpToLine(offset + bytes);
  slotCursor_[published_ % layout_.slots()] = end < spreadBytes_ ? end : 0;
}

bool ShmConnection::completeSends() {
  // Complete in ticket order. A slot send is done once published (its bytes are in the slots);
  // a CMA send once the receiver released its descriptor slot, i.e. finished reading our buffer.
  bool moved = false;
  while (sends_.completed < sendCursor_) {
    SendOp& op = sends_.at(sends_.completed);
    if (op.viaCma) {
      if (!acquirePeerReleased(op.doneWhenReleased)) break;
      ++cmaSends_;
    }
    ++sends_.completed;
    moved = true;
  }
  return moved;
}

// ---- zero-copy send ----

void* ShmConnection::sendSlot(size_t bytes) {
  const bool oneSlot = bytes <= layout_.slotBytes() && !(sendViaCma_ && bytes >= sendCmaThreshold_);
  if (!oneSlot || sendCursor_ != sends_.posted ||
      sends_.posted - sends_.completed >= kMaxInFlight || !acquireOutboundSpace()) {
    return nullptr;
  }
  return layout_.data(side_, published_) + placeInSlot(bytes);
}

uint64_t ShmConnection::publishSend(size_t bytes, FrameTag tag) {
  const auto* written = static_cast<const uint8_t*>(sendSlot(bytes));
  if (written == nullptr) {
    fail(hoopInternalError, "rank ", selfRank_, ": publishSend of ", bytes, " bytes to ", peer_,
         " without a slot from sendSlot (or with a send posted since)");
  }
  ShmSlotHeader header = headerFor(tag, bytes);
  header.fragmentBytes = bytes;
  header.dataOffset = static_cast<size_t>(written - layout_.data(side_, published_));
  advanceSlotCursor(header.dataOffset, bytes);
  std::memcpy(layout_.header(side_, published_), &header, sizeof(header));
  publishSlot();
  finishWakeUp();
  const uint64_t ticket = sends_.posted++;
  sends_.at(ticket) = SendOp{nullptr, bytes, tag, bytes};
  ++sendCursor_;
  completeSends();
  idle_ = false;
  return ticket;
}

// ---- receiving ----

std::optional<FrameTag> ShmConnection::peekUnclaimed() {
  if (recvs_.completed != recvs_.posted || peek_.active || peek_.wanted) return std::nullopt;
  if (!acquireInboundSlot()) return std::nullopt;
  const ShmSlotHeader header = readInboundHeader();
  // Garbage is for the receive that claims it to report, with its checks.
  if (header.magic != ShmSlotHeader::kMagic || header.version != ShmSlotHeader::kVersion ||
      header.fragmentOffset != 0) {
    return std::nullopt;
  }
  return FrameTag{static_cast<OpKind>(header.kind),
                  header.seq,
                  {header.callCount, header.callType, header.callOp, header.callRoot}};
}

ShmSlotHeader ShmConnection::readInboundHeader() const {
  // A private copy: the peer could change the shared header after we checked it, so we check
  // and then use only the copy.
  ShmSlotHeader header;
  std::memcpy(&header, layout_.header(1 - side_, consumed_), sizeof(header));
  return header;
}

bool ShmConnection::progressRecvs() {
  bool moved = false;
  while (recvs_.completed < recvs_.posted && acquireInboundSlot()) {
    RecvOp& op = recvs_.at(recvs_.completed);
    ShmSlotHeader header = readInboundHeader();
    checkHeader(header, op);
    if ((header.flags & ShmSlotHeader::kViaCma) != 0) {
      receiveViaCma(header, op);
    } else {
      if (header.fragmentBytes > 0) {
        std::memcpy(op.data + op.received, layout_.data(1 - side_, consumed_) + header.dataOffset,
                    header.fragmentBytes);
      }
      op.received += header.fragmentBytes;
    }
    ++op.fragments;
    releaseSlot();
    moved = true;
    if (op.received == op.bytes) ++recvs_.completed;
  }
  return moved;
}

void ShmConnection::receiveViaCma(const ShmSlotHeader& header, RecvOp& op) {
  int error = cmaRead(peerProcess_.pid(), header.cmaAddress, op.data, op.bytes);
  if (error == ESRCH) {
    // peer_ already names the pid ("rank 3 (host b, pid 912)").
    fail(hoopRemoteError, "rank ", selfRank_, ": ", peer_, " exited while rank ", selfRank_,
         " was reading ", opKindName(op.tag.kind), " #", op.tag.seq,
         " from it; it crashed or was killed (see its log)");
  }
  if (error != 0) {
    fail(hoopRemoteError, "rank ", selfRank_, ": reading ", opKindName(op.tag.kind), " #",
         op.tag.seq, " (", op.bytes, " bytes) from ", peer_,
         " with process_vm_readv failed: ", errnoText(error), "; the connection is unusable");
  }
  op.received = op.bytes;
  ++cmaRecvs_;
}

void ShmConnection::checkHeader(const ShmSlotHeader& header, const RecvOp& op) const {
  if (header.magic != ShmSlotHeader::kMagic || header.version != ShmSlotHeader::kVersion) {
    failGarbage(op, "bad magic/version");
  }
  if (header.position != consumed_) {
    failGarbage(op, str("slot of position ", header.position, " at position ", consumed_));
  }
  if ((header.flags & ~ShmSlotHeader::kViaCma) != 0) failGarbage(op, "unknown flags");
  auto kind = static_cast<OpKind>(header.kind);
  bool first = op.fragments == 0;
  if (first) {
    if (header.fragmentOffset != 0) failGarbage(op, "message starts at an offset");
    // Same texts as the TCP transport: what the user did wrong, not which transport saw it.
    if (kind != op.tag.kind || header.seq != op.tag.seq) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " is in ", opKindName(op.tag.kind), " #",
           op.tag.seq, " but ", peer_, " sent data for ", opKindName(kind), " #", header.seq,
           ": ranks called collectives in a different order");
    }
    const CallParams call{header.callCount, header.callType, header.callOp, header.callRoot};
    if (call != op.tag.call) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " called ",
           describeCall(op.tag.kind, op.tag.seq, op.tag.call), " but ", peer_, " called ",
           describeCall(kind, header.seq, call),
           ": every rank must make the same call with the same count, type, op and root");
    }
    if (header.messageBytes != op.bytes) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " expected ", op.bytes, " bytes from ", peer_,
           " in ", opKindName(op.tag.kind), " #", op.tag.seq, " but got ", header.messageBytes,
           ": ranks passed different counts or datatypes");
    }
  } else if (kind != op.tag.kind || header.seq != op.tag.seq || header.messageBytes != op.bytes ||
             header.fragmentOffset != op.received) {
    failGarbage(op, "fragment does not continue the message");
  }
  if ((header.flags & ShmSlotHeader::kViaCma) != 0) {
    if (!recvViaCma_) failGarbage(op, "CMA descriptor, but CMA was not agreed");
    if (!first || header.fragmentBytes != 0 || header.messageBytes < peerCmaThreshold_) {
      failGarbage(op, "malformed CMA descriptor");
    }
  } else {
    size_t due = std::min(layout_.slotBytes(), op.bytes - op.received);
    if (header.fragmentBytes != due) {
      failGarbage(op, str("fragment of ", header.fragmentBytes, " bytes where ", due, " were due"));
    }
    // due <= slotBytes: the subtraction cannot wrap.
    if (header.dataOffset % kShmCacheLine != 0 ||
        header.dataOffset > layout_.slotBytes() - header.fragmentBytes) {
      failGarbage(op, str("fragment of ", header.fragmentBytes, " bytes at offset ",
                          header.dataOffset, " of a ", layout_.slotBytes(), "-byte slot"));
    }
  }
}

void ShmConnection::failGarbage(const RecvOp& op, const std::string& why) const {
  fail(hoopRemoteError, "rank ", selfRank_, ": garbage on the shared-memory connection from ",
       peer_, " (bad slot header: ", why, ") during ", opKindName(op.tag.kind), " #", op.tag.seq,
       "; the connection is unusable");
}

// ---- zero-copy receive ----

bool ShmConnection::canPeek(size_t bytes) const {
  return bytes <= layout_.slotBytes() && !(recvViaCma_ && bytes >= peerCmaThreshold_);
}

const void* ShmConnection::peekRecv(size_t bytes, FrameTag tag) {
  if (peek_.active) {
    if (bytes != peek_.bytes || tag.kind != peek_.tag.kind || tag.seq != peek_.tag.seq) {
      fail(hoopInternalError, "rank ", selfRank_, ": peekRecv from ", peer_,
           " for another message while one is held (call releasePeeked first)");
    }
    return peek_.data;
  }
  if (recvs_.completed < recvs_.posted) {
    fail(hoopInternalError, "rank ", selfRank_, ": peekRecv from ", peer_,
         " while posted receives are pending (messages are consumed in order)");
  }
  if (!canPeek(bytes)) {
    fail(hoopInternalError, "rank ", selfRank_, ": peekRecv of ", bytes, " bytes from ", peer_,
         " cannot succeed: the message does not travel in one slot (check canPeek)");
  }
  if (!acquireInboundSlot()) {
    if (!peek_.wanted) idle_ = false;  // a new wait starts its own liveness clock
    peek_.wanted = true;
    peek_.tag = tag;
    checkPeerWhileIdle();
    return nullptr;
  }
  RecvOp expected;
  expected.bytes = bytes;
  expected.tag = tag;
  ShmSlotHeader header = readInboundHeader();
  checkHeader(header, expected);
  if ((header.flags & ShmSlotHeader::kViaCma) != 0) {
    failGarbage(expected, "CMA descriptor below the sender's threshold");
  }
  peek_ = Peek{true, false, layout_.data(1 - side_, consumed_) + header.dataOffset, bytes, tag};
  idle_ = false;
  return peek_.data;
}

void ShmConnection::releasePeeked() {
  if (!peek_.active) {
    fail(hoopInternalError, "rank ", selfRank_, ": releasePeeked from ", peer_,
         " without a peeked message");
  }
  peek_.active = false;
  releaseSlot();
  finishWakeUp();
  // The message counts as one receive, posted and completed, so tickets keep matching the peer's.
  ++recvs_.posted;
  ++recvs_.completed;
}

// ---- a peer that is gone ----

bool ShmConnection::workPending() const {
  return sends_.completed < sends_.posted || recvs_.completed < recvs_.posted || peek_.wanted ||
         eager_.wanted;
}

void ShmConnection::checkPeerWhileIdle() {
  // A clock read costs about as much as a whole idle pass (more in a VM) and a small message
  // arrives within a few passes, so look at the clock only every kIdlePassesPerClockRead passes.
  // A caller that sleeps between passes (20 ms slices at most) still checks within a second.
  constexpr uint32_t kIdlePassesPerClockRead = 16;
  if (!idle_) {
    idle_ = true;
    idlePasses_ = 0;
    nextLivenessCheck_ = {};
  }
  if (++idlePasses_ % kIdlePassesPerClockRead != 0) return;
  failIfPeerInAnotherCall();
  const auto now = std::chrono::steady_clock::now();
  if (nextLivenessCheck_ == std::chrono::steady_clock::time_point{}) {
    nextLivenessCheck_ = now + livenessInterval_;
    return;
  }
  if (now < nextLivenessCheck_) return;
  nextLivenessCheck_ = now + livenessInterval_;
  bool exited = peerProcess_.exited();
  bool closed = peerControl().state.closed.load(std::memory_order_acquire) != 0;
  if (!exited && !closed) return;
  // It may have published its last messages and then exited normally since our last pass: a
  // message a peek waits for counts as well as one a posted receive takes (the peek found the
  // slot empty before the peer published and left).
  bool moved = progressSends();
  moved |= progressRecvs();
  if (peek_.wanted) moved |= acquireInboundSlot();
  if (eager_.wanted) {
    const ShmEagerDescriptor& next = layout_.eagerDescriptor(1 - side_, eagerRead_ + 1);
    moved |= next.number.load(std::memory_order_acquire) == eagerRead_ + 1;
  }
  if (moved || !workPending()) {
    idle_ = false;
    return;
  }
  if (exited) {
    fail(hoopRemoteError, "rank ", selfRank_, ": ", peer_, " exited while rank ", selfRank_,
         " was ", pendingWork(), "; it crashed or was killed (see its log)");
  }
  fail(hoopRemoteError, "rank ", selfRank_, ": ", peer_,
       " closed its shared-memory connection while rank ", selfRank_, " was ", pendingWork(),
       "; it failed or left the operation early (see its log)");
}

std::string ShmConnection::pendingWork() const {
  std::string what;
  if (recvs_.completed < recvs_.posted) {
    FrameTag tag = recvs_.ring[recvs_.completed % kMaxInFlight].tag;
    what = str("waiting for ", opKindName(tag.kind), " #", tag.seq, " data from it");
  } else if (peek_.wanted) {
    what = str("waiting for ", opKindName(peek_.tag.kind), " #", peek_.tag.seq, " data from it");
  } else if (eager_.wanted) {
    what = str("waiting for ", opKindName(eager_.call.tag.kind), " #", eager_.call.tag.seq,
               " data from it");
  }
  if (sends_.completed < sends_.posted) {
    FrameTag tag = sends_.ring[sends_.completed % kMaxInFlight].tag;
    what +=
        str(what.empty() ? "" : " and ", "sending ", opKindName(tag.kind), " #", tag.seq, " to it");
  }
  return what;
}

}  // namespace hoop
