// The data-movement steps schedules are written in (DESIGN.md section 2). A schedule says which
// piece goes where; these say how: post, wait, reduce, forward. Sends are asynchronous and their
// buffers must stay untouched until finish() (or until a later step proves the peer has them).
// Every copy and reduction runs on the call's executor (device/executor.h), and the zero-copy
// paths are whatever the connections offer (transport/capabilities.h): no step knows which
// memory or transport it moves.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/team.h"
#include "base/error.h"
#include "device/executor.h"
#include "transport/connection.h"

namespace hoop {

class Primitives {
 public:
  // `scratchPieces` send-side scratch slots of `pieceBytes` each, for intermediate results that
  // have no home in the user's buffers (reduce-scatter, reduce). Runs on the executor for
  // args.memory.
  Primitives(Team& comm, const CollectiveArgs& args, size_t pieceBytes, size_t scratchPieces = 0);
  // For messages in host memory outside a collective call (barrier, measurements).
  Primitives(Team& comm, FrameTag tag, DataType type, RedOp op, size_t pieceBytes,
             size_t scratchPieces = 0);

  void send(int to, const void* data, size_t bytes);
  void recv(int from, void* data, size_t bytes);
  // recv in two halves, for a schedule that lets receives land while it does other work: posts
  // the receive and returns its ticket; awaitRecv waits for it. Nothing from `from` may be used
  // in place (the reductions below) while a posted receive from it is still waiting.
  uint64_t postRecv(int from, void* data, size_t bytes);
  void awaitRecv(int from, uint64_t ticket);
  // out = received (op) in, then send out. `out` may equal `in`.
  void recvReduceSend(int from, int to, const void* in, void* out, size_t count);
  // out = received (op) in, kept here.
  void recvReduce(int from, const void* in, void* out, size_t count);
  // The last reduction: for avg also divides by `divisor` (the ranks that contributed). Sends
  // out when to >= 0.
  void recvReduceCopySend(int from, int to, const void* in, void* out, size_t count,
                          size_t divisor);
  // Receives into out, then forwards out.
  void recvCopySend(int from, int to, void* out, size_t bytes);
  // Reduces into a scratch slot and sends it (for schedules whose output is too small to hold
  // intermediate results).
  void recvReduceSendScratch(int from, int to, const void* in, size_t count);
  // Reduces into a scratch slot and keeps it there: a partial result that one more reduction
  // (recvReduceSendScratch, recvReduceCopySend) will finish, as a tree node with two children
  // needs. Valid until `scratchPieces` more scratch steps have run.
  const char* recvReduceScratch(int from, const void* in, size_t count);
  // Posts the receive from `from`, then the send to `to`, and returns when both are done, so
  // both buffers are free again. Schedules that trade data with one partner per round
  // (recursive doubling and halving, Bruck) are written in it; posting the receive first lets
  // two partners swap more than a connection's slots hold without waiting on each other.
  void sendRecv(int to, const void* sendData, size_t sendBytes, int from, void* recvData,
                size_t recvBytes);
  // Receives `count` elements from `from` and combines them into `data`. The lower rank's data
  // is always the first operand, so two partners combining each other's data get the same bits.
  void recvCombine(int from, void* data, size_t count);
  // Trades with `peer`: sends `giveCount` elements of `give`, receives `keepCount` elements and
  // combines them into `keep` (operands in rank order, as recvCombine). `give` and `keep` may
  // be the same piece: the send has completed before `keep` changes.
  void exchangeCombine(int peer, const void* give, size_t giveCount, void* keep, size_t keepCount);
  // Waits until every send this rank has posted (on any connection) has left this process.
  void finish();

  // Local steps, on the call's executor.
  // dst = src; the ranges may overlap.
  void copy(void* dst, const void* src, size_t bytes) { executor_.copy(dst, src, bytes); }
  // For avg, data /= divisor (the ranks that contributed): the step that finishes an average
  // whose sums were reduced without dividing. Nothing for other ops.
  void finishAverage(void* data, size_t count, size_t divisor) {
    executor_.finishAverage(data, data, count, type_, op_, divisor);
  }
  // Staging of `bytes` in the call's memory for the schedule's own use (inputs gathered for a
  // fold, a copy of an input that the output overwrites), beside the pieces' staging. Take it
  // once, before the first step; valid while this object lives.
  char* staging(size_t bytes);

 private:
  Primitives(Team& comm, Executor& executor, FrameTag tag, DataType type, RedOp op,
             size_t pieceBytes, size_t scratchPieces);
  void awaitRecv(Connection& c, uint64_t ticket, int from);
  void awaitSend(Connection& c, uint64_t ticket, int to);
  // Receives a piece and calls use(data) on it: in place in the peer's shared-memory slot when
  // it fits one, else copied into the staging slot first.
  template <typename Use>
  void withReceived(int from, size_t bytes, Use use);
  // The next slot to `to` when a piece of `bytes` can be written straight into it now (the
  // connection's DirectSend), else null; sendWritten hands the written piece over. A reduction
  // that writes its result there saves the copy a posted send would make. Nothing may be sent to
  // `to` in between.
  void* outboundSlot(int to, size_t bytes);
  void sendWritten(int to, size_t bytes);
  // The connection from `from` when it can hand over a piece of `bytes` in place, else null.
  InPlaceReceive* inPlaceFrom(int from, size_t bytes);
  // The next scratch slot, once the send that last used it has completed.
  char* takeScratchSlot();
  // data = (lower rank's data) op (higher rank's data), `received` coming from `peer`.
  void combineInRankOrder(int peer, void* data, const void* received, size_t count);

  Team& comm_;
  Executor& executor_;
  FrameTag tag_;
  DataType type_;
  RedOp op_;
  size_t pieceBytes_;
  char* staging_;
  char* scratchBase_;
  size_t scratchPieces_;
  size_t nextScratch_ = 0;
  struct PendingSend {
    Connection* connection = nullptr;
    uint64_t ticket = 0;
    int to = -1;
  };
  std::vector<PendingSend> scratchSends_;  // the send that last used each scratch slot
};

// How many elements a schedule moves per piece: the tuner's piece size for the call, else
// HOOP_CHUNK_SIZE, in whole elements, at least one.
inline size_t pieceElementsFor(const Team& comm, const CollectiveArgs& args) {
  const size_t bytes = args.pieceBytes != 0 ? args.pieceBytes : comm.chunkBytes();
  return std::max<size_t>(1, bytes / dataTypeSize(args.type));
}

// A broadcast's first step at its root: the input becomes the output the pieces go out from.
inline void rootInputToOutput(const Team& comm, const CollectiveArgs& args) {
  if (comm.rank() == args.root && args.send != args.recv) {
    executorOf(args).copy(args.recv, args.send, args.bytes());
  }
}

// Splits `count` elements into `parts` nearly equal ranges (the first count % parts get one more).
struct EvenSplit {
  size_t count;
  size_t parts;
  size_t offset(size_t i) const { return i * (count / parts) + std::min(i, count % parts); }
  size_t size(size_t i) const { return count / parts + (i < count % parts ? 1 : 0); }
};

}  // namespace hoop
