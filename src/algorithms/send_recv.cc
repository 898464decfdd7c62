// A group of sends and receives: everything is posted at once and completes together, so
// exchanges in any direction and order cannot deadlock. Large messages are cut into pieces so
// they spread over all of a connection's streams.

#include "algorithms/collective.h"
#include "algorithms/team.h"
#include "base/error.h"
#include "device/executor.h"

namespace hoop {

void runP2pGroup(Team& comm, const std::vector<P2pOp>& ops) {
  const int self = comm.rank();
  std::vector<int> peers;
  for (const P2pOp& op : ops) {
    if (op.peer != self) peers.push_back(op.peer);
  }
  // Point-to-point calls have per-peer numbers; the group as a whole is named by the first.
  comm.beginOperation(OpKind::kSendRecv, 0, ops.empty() ? 0 : ops.front().count,
                      ops.empty() ? DataType::kInt8 : ops.front().type);
  comm.connectAll(peers);

  // Sends to self are matched to receives from self in call order, as copies.
  std::vector<const P2pOp*> selfSends;
  std::vector<const P2pOp*> selfRecvs;
  const size_t pieceBytes = comm.chunkBytes();
  struct Waiting {
    Connection* connection;
    uint64_t lastTicket;
    bool isSend;
    int peer;
  };
  std::vector<Waiting> waits;
  for (const P2pOp& op : ops) {
    if (op.peer == self) {
      (op.isSend ? selfSends : selfRecvs).push_back(&op);
      continue;
    }
    Connection& c = comm.connection(op.peer);
    const FrameTag tag{OpKind::kSendRecv,
                       op.isSend ? comm.nextSendSeq(op.peer) : comm.nextRecvSeq(op.peer)};
    const size_t bytes = op.count * dataTypeSize(op.type);
    auto* data = static_cast<char*>(op.buffer);
    uint64_t ticket = 0;
    for (size_t offset = 0; offset < bytes || offset == 0; offset += pieceBytes) {
      const size_t piece = std::min(pieceBytes, bytes - offset);
      const uint64_t posted =
          op.isSend ? c.sendsPosted() - c.sendsCompleted() : c.recvsPosted() - c.recvsCompleted();
      if (posted >= c.maxInFlight()) {
        // Too much in flight: let the oldest message finish before posting more.
        comm.waitUntil(
            [&] {
              return (op.isSend ? c.sendsPosted() - c.sendsCompleted()
                                : c.recvsPosted() - c.recvsCompleted()) < c.maxInFlight();
            },
            [&] { return comm.describePeer(op.peer); });
      }
      ticket =
          op.isSend ? c.postSend(data + offset, piece, tag) : c.postRecv(data + offset, piece, tag);
      if (bytes == 0) break;
    }
    waits.push_back({&c, ticket, op.isSend, op.peer});
  }
  if (selfSends.size() != selfRecvs.size()) {
    fail(hoopInvalidUsage, "rank ", self, ": a group has ", selfSends.size(),
         " send(s) to itself but ", selfRecvs.size(), " receive(s) from itself");
  }
  for (size_t i = 0; i < selfSends.size(); ++i) {
    size_t sendBytes = selfSends[i]->count * dataTypeSize(selfSends[i]->type);
    size_t recvBytes = selfRecvs[i]->count * dataTypeSize(selfRecvs[i]->type);
    if (sendBytes != recvBytes) {
      fail(hoopInvalidUsage, "rank ", self, ": send to itself of ", sendBytes,
           " bytes matched with a receive of ", recvBytes, " bytes");
    }
    Executor& executor = selfSends[i]->executor != nullptr ? *selfSends[i]->executor
                                                           : executorFor(MemoryKind::kHost);
    executor.copy(selfRecvs[i]->buffer, selfSends[i]->buffer, sendBytes);
  }
  for (const Waiting& w : waits) {
    comm.waitUntil(
        [&] {
          return w.isSend ? w.connection->sendsCompleted() > w.lastTicket
                          : w.connection->recvsCompleted() > w.lastTicket;
        },
        [&] {
          return str(w.isSend ? "" : "data from ", comm.describePeer(w.peer),
                     w.isSend ? " to receive" : "");
        });
  }
}

}  // namespace hoop
