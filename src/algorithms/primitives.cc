#include "algorithms/primitives.h"

#include <algorithm>
#include <cstring>

namespace hoop {

Primitives::Primitives(Communicator& comm, FrameTag tag, DataType type, RedOp op, size_t pieceBytes,
                       size_t scratchPieces)
    : comm_(comm),
      tag_(tag),
      type_(type),
      op_(op),
      pieceBytes_(pieceBytes),
      scratchPieces_(scratchPieces),
      scratchSends_(scratchPieces) {
  // One staging slot for the piece being received, then the send scratch slots.
  staging_ = comm.scratch(pieceBytes * (1 + scratchPieces));
  scratchBase_ = staging_ + pieceBytes;
}

void Primitives::awaitRecv(Connection& c, uint64_t ticket, int from) {
  comm_.waitUntil([&] { return c.recvsCompleted() > ticket; },
                  [&] { return str("data from ", comm_.peer(from).describe()); });
}

void Primitives::awaitSend(Connection& c, uint64_t ticket, int to) {
  comm_.waitUntil([&] { return c.sendsCompleted() > ticket; },
                  [&] { return str(comm_.peer(to).describe(), " to take data"); });
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
  Connection& c = comm_.connection(from);
  awaitRecv(c, c.postRecv(data, bytes, tag_), from);
}

template <typename Use>
void Primitives::withReceived(int from, size_t bytes, Use use) {
  // Over shared memory a piece that fits one slot is used where it lies, in the peer's slot:
  // one memory pass less than copying it out first. recv() never leaves a receive posted, so
  // nothing is queued ahead of the peek.
  if (ShmConnection* shm = comm_.shmConnection(from); shm != nullptr && shm->canPeek(bytes)) {
    const void* received = nullptr;
    comm_.waitUntil([&] { return (received = shm->peekRecv(bytes, tag_)) != nullptr; },
                    [&] { return str("data from ", comm_.peer(from).describe()); });
    use(received);
    shm->releasePeeked();
    return;
  }
  recv(from, staging_, bytes);
  use(staging_);
}

void Primitives::recvReduceSend(int from, int to, const void* in, void* out, size_t count) {
  recvReduce(from, in, out, count);
  send(to, out, count * dataTypeSize(type_));
}

void Primitives::recvReduce(int from, const void* in, void* out, size_t count) {
  withReceived(from, count * dataTypeSize(type_),
               [&](const void* received) { reduce(out, received, in, count, type_, op_); });
}

void Primitives::recvReduceCopySend(int from, int to, const void* in, void* out, size_t count,
                                    size_t divisor) {
  withReceived(from, count * dataTypeSize(type_), [&](const void* received) {
    reduceFinal(out, received, in, count, type_, op_, divisor);
  });
  if (to >= 0) send(to, out, count * dataTypeSize(type_));
}

void Primitives::recvCopySend(int from, int to, void* out, size_t bytes) {
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
  char* out = takeScratchSlot();
  withReceived(from, count * dataTypeSize(type_),
               [&](const void* received) { reduce(out, received, in, count, type_, op_); });
  Connection& c = comm_.connection(to);
  send(to, out, count * dataTypeSize(type_));
  scratchSends_[(nextScratch_ - 1) % scratchPieces_] = {&c, c.sendsPosted() - 1, to};
}

const char* Primitives::recvReduceScratch(int from, const void* in, size_t count) {
  char* out = takeScratchSlot();
  withReceived(from, count * dataTypeSize(type_),
               [&](const void* received) { reduce(out, received, in, count, type_, op_); });
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
    reduce(data, received, data, count, type_, op_);
  } else {
    reduce(data, data, received, count, type_, op_);
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
  if (ShmConnection* shm = comm_.shmConnection(peer); shm != nullptr && shm->canPeek(keepBytes)) {
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
