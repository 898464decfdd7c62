#include "algorithms/primitives.h"

#include <algorithm>

#include "transport/capabilities.h"

namespace hoop {

Primitives::Primitives(Team& comm, const CollectiveArgs& args, size_t pieceBytes,
                       size_t scratchPieces)
    : Primitives(comm, executorOf(args), args.tag(), args.type, args.op, pieceBytes,
                 scratchPieces) {}

Primitives::Primitives(Team& comm, FrameTag tag, DataType type, RedOp op, size_t pieceBytes,
                       size_t scratchPieces)
    : Primitives(comm, executorFor(MemoryKind::kHost), tag, type, op, pieceBytes, scratchPieces) {}

Primitives::Primitives(Team& comm, Executor& executor, FrameTag tag, DataType type, RedOp op,
                       size_t pieceBytes, size_t scratchPieces)
    : comm_(comm),
      executor_(executor),
      tag_(tag),
      type_(type),
      op_(op),
      pieceBytes_(pieceBytes),
      scratchPieces_(scratchPieces),
      scratchSends_(scratchPieces) {
  // One staging slot for the piece being received, then the send scratch slots.
  staging_ = comm.staging(executor_, pieceBytes * (1 + scratchPieces));
  scratchBase_ = staging_ + pieceBytes;
}

char* Primitives::staging(size_t bytes) {
  // Growing the team's staging moves it: the pieces' slots move with it.
  const size_t piecesBytes = pieceBytes_ * (1 + scratchPieces_);
  staging_ = comm_.staging(executor_, piecesBytes + bytes);
  scratchBase_ = staging_ + pieceBytes_;
  return staging_ + piecesBytes;
}

void Primitives::awaitRecv(Connection& c, uint64_t ticket, int from) {
  comm_.waitUntil([&] { return c.recvsCompleted() > ticket; },
                  [&] { return str("data from ", comm_.describePeer(from)); });
}

void Primitives::awaitSend(Connection& c, uint64_t ticket, int to) {
  comm_.waitUntil([&] { return c.sendsCompleted() > ticket; },
                  [&] { return str(comm_.describePeer(to), " to take data"); });
  c.fenceSends();
}

void Primitives::send(int to, const void* data, size_t bytes) {
  Connection& c = comm_.connection(to);
  // Bound the sends in flight: a rank that only sends (a broadcast root) must not outrun the
  // connection's fixed message ring.
  if (c.sendsPosted() - c.sendsCompleted() >= c.maxInFlight()) {
    awaitSend(c, c.sendsPosted() - c.maxInFlight(), to);
  }
  c.postSend(data, bytes, tag_);
}

void Primitives::recv(int from, void* data, size_t bytes) {
  awaitRecv(from, postRecv(from, data, bytes));
}

uint64_t Primitives::postRecv(int from, void* data, size_t bytes) {
  return comm_.connection(from).postRecv(data, bytes, tag_);
}

void Primitives::awaitRecv(int from, uint64_t ticket) {
  awaitRecv(comm_.connection(from), ticket, from);
}

InPlaceReceive* Primitives::inPlaceFrom(int from, size_t bytes) {
  InPlaceReceive* inPlace = comm_.connection(from).inPlaceReceive();
  return inPlace != nullptr && inPlace->canPeek(bytes) ? inPlace : nullptr;
}

template <typename Use>
void Primitives::withReceived(int from, size_t bytes, Use use) {
  // A piece the connection can hand over in place (one shared-memory slot) is used where it
  // lies: one memory pass less than copying it out first. recv() never leaves a receive posted,
  // so nothing is queued ahead of the peek.
  if (InPlaceReceive* inPlace = inPlaceFrom(from, bytes)) {
    const void* received = nullptr;
    comm_.waitUntil([&] { return (received = inPlace->peekRecv(bytes, tag_)) != nullptr; },
                    [&] { return str("data from ", comm_.describePeer(from)); });
    use(received);
    inPlace->releasePeeked();
    return;
  }
  // A schedule passes at most a piece here: more would run past the staging piece.
  if (bytes > pieceBytes_) {
    fail(hoopInternalError, "rank ", comm_.rank(), ": a ", bytes, "-byte receive from ",
         comm_.describePeer(from), " into a staging piece of ", pieceBytes_, " bytes");
  }
  recv(from, staging_, bytes);
  use(staging_);
}

void* Primitives::outboundSlot(int to, size_t bytes) {
  // Smaller pieces gain nothing: a reduction that stores into a slot the peer's core last read
  // runs slower than one into this rank's cache followed by a copy, and the piece is still in
  // cache for that copy; from pieces that leave the level-2 cache, the separate copy is one more
  // pass over memory and reducing in place wins (docs/design-notes.md).
  constexpr size_t kInPlaceFromBytes = 256 << 10;
  if (bytes < kInPlaceFromBytes) return nullptr;
  Connection& c = comm_.connection(to);
  DirectSend* direct = c.directSend();
  if (direct == nullptr) return nullptr;
  if (void* slot = direct->sendSlot(bytes)) return slot;
  // A send posted just before (a ring's first step) waits in the queue for the next progress
  // pass: let it out now, so this piece can follow it straight into the next slot.
  c.progress();
  return direct->sendSlot(bytes);
}

void Primitives::sendWritten(int to, size_t bytes) {
  comm_.connection(to).directSend()->publishSend(bytes, tag_);
}

void Primitives::recvReduceSend(int from, int to, const void* in, void* out, size_t count) {
  const size_t bytes = count * dataTypeSize(type_);
  // The slot is taken before the wait: free slots only grow while this rank posts nothing.
  if (void* slot = outboundSlot(to, bytes)) {
    withReceived(from, bytes, [&](const void* received) {
      executor_.reduceCopy(out, slot, received, in, count, type_, op_);
    });
    sendWritten(to, bytes);
    return;
  }
  recvReduce(from, in, out, count);
  send(to, out, bytes);
}

void Primitives::recvReduce(int from, const void* in, void* out, size_t count) {
  withReceived(from, count * dataTypeSize(type_), [&](const void* received) {
    executor_.reduce(out, received, in, count, type_, op_);
  });
}

void Primitives::recvReduceCopySend(int from, int to, const void* in, void* out, size_t count,
                                    size_t divisor) {
  const size_t bytes = count * dataTypeSize(type_);
  void* slot = to >= 0 ? outboundSlot(to, bytes) : nullptr;
  withReceived(from, bytes, [&](const void* received) {
    executor_.reduceCopyFinal(out, slot, received, in, count, type_, op_, divisor);
  });
  if (slot != nullptr) {
    sendWritten(to, bytes);
  } else if (to >= 0) {
    send(to, out, bytes);
  }
}

void Primitives::recvCopySend(int from, int to, void* out, size_t bytes) {
  // Size first (inside outboundSlot): small pieces, the common case, look no further.
  if (void* slot = outboundSlot(to, bytes)) {
    if (inPlaceFrom(from, bytes) != nullptr) {
      withReceived(from, bytes, [&](const void* received) {
        executor_.copy(out, received, bytes);
        executor_.copy(slot, received, bytes);
      });
      sendWritten(to, bytes);
      return;
    }
  }
  recv(from, out, bytes);
  send(to, out, bytes);
}

char* Primitives::takeScratchSlot() {
  const size_t slot = nextScratch_++ % scratchPieces_;
  PendingSend& previous = scratchSends_[slot];
  if (previous.connection != nullptr) awaitSend(*previous.connection, previous.ticket, previous.to);
  previous = {};
  return scratchBase_ + slot * pieceBytes_;
}

void Primitives::recvReduceSendScratch(int from, int to, const void* in, size_t count) {
  const size_t bytes = count * dataTypeSize(type_);
  if (void* slot = outboundSlot(to, bytes)) {  // the slot is the scratch: nothing to keep here
    withReceived(from, bytes, [&](const void* received) {
      executor_.reduce(slot, received, in, count, type_, op_);
    });
    sendWritten(to, bytes);
    return;
  }
  char* out = takeScratchSlot();
  withReceived(from, count * dataTypeSize(type_), [&](const void* received) {
    executor_.reduce(out, received, in, count, type_, op_);
  });
  Connection& c = comm_.connection(to);
  send(to, out, count * dataTypeSize(type_));
  scratchSends_[(nextScratch_ - 1) % scratchPieces_] = {&c, c.sendsPosted() - 1, to};
}

const char* Primitives::recvReduceScratch(int from, const void* in, size_t count) {
  char* out = takeScratchSlot();
  withReceived(from, count * dataTypeSize(type_), [&](const void* received) {
    executor_.reduce(out, received, in, count, type_, op_);
  });
  return out;
}

void Primitives::sendRecv(int to, const void* sendData, size_t sendBytes, int from, void* recvData,
                          size_t recvBytes) {
  Connection& in = comm_.connection(from);
  const uint64_t recvTicket = in.postRecv(recvData, recvBytes, tag_);
  send(to, sendData, sendBytes);
  Connection& out = comm_.connection(to);
  const uint64_t sendTicket = out.sendsPosted() - 1;
  awaitRecv(in, recvTicket, from);
  awaitSend(out, sendTicket, to);
}

void Primitives::combineInRankOrder(int peer, void* data, const void* received, size_t count) {
  if (peer < comm_.rank()) {
    executor_.reduce(data, received, data, count, type_, op_);
  } else {
    executor_.reduce(data, data, received, count, type_, op_);
  }
}

void Primitives::recvCombine(int from, void* data, size_t count) {
  withReceived(from, count * dataTypeSize(type_),
               [&](const void* received) { combineInRankOrder(from, data, received, count); });
}

void Primitives::exchangeCombine(int peer, const void* give, size_t giveCount, void* keep,
                                 size_t keepCount) {
  const size_t elementSize = dataTypeSize(type_);
  const size_t keepBytes = keepCount * elementSize;
  if (inPlaceFrom(peer, keepBytes) != nullptr) {
    // The partner's piece fits a slot: combine it where it lies instead of copying it out first
    // (one memory pass less per round; recursive doubling and halving are made of these). Both
    // partners send before they look, and a piece takes one slot, so neither waits on the other.
    Connection& c = comm_.connection(peer);
    send(peer, give, giveCount * elementSize);
    awaitSend(c, c.sendsPosted() - 1, peer);  // `give` may be `keep`: it must have left first
    withReceived(peer, keepBytes, [&](const void* received) {
      combineInRankOrder(peer, keep, received, keepCount);
    });
    return;
  }
  sendRecv(peer, give, giveCount * elementSize, peer, staging_, keepBytes);
  combineInRankOrder(peer, keep, staging_, keepCount);
}

void Primitives::finish() {
  comm_.waitUntil([&] { return comm_.allSendsCompleted(); },
                  [&] { return std::string("peers to take this rank's last data"); });
}

}  // namespace hoop
