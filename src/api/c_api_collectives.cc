// The C API's operations: the collectives, send and receive, and the barrier. Each checks its
// arguments (a wrong one leaves the communicator usable) and submits (c_api_submit.h).
#include <optional>

#include "algorithms/collective.h"
#include "api/c_api_arguments.h"
#include "api/c_api_redop.h"
#include "api/c_api_submit.h"

using namespace hoop;
using namespace hoop::capi;

namespace {

// One collective call as the C API receives it, and what its arguments must satisfy.
struct CollectiveCall {
  const char* name;
  OpKind kind;
  const void* send;
  void* recv;
  size_t count;
  hoopDataType_t datatype;
  std::optional<hoopRedOp_t> op;  // reducing collectives
  std::optional<int> root;        // rooted collectives
  bool sendPerRank = false;       // the buffer holds count elements per rank
  bool recvPerRank = false;
  bool sendOnRootOnly = false;  // only the root reads it
  bool recvOnRootOnly = false;  // only the root writes it
};

// Checks the arguments (leaving the communicator usable when they are wrong) and submits.
hoopResult_t submitChecked(hoopComm* comm, hoopStream_t stream, const CollectiveCall& call) {
  CollectiveArgs args;
  std::optional<PreMulFactor> premultiply;
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, call.name);
    checkType(call.datatype, call.name);
    // Read now: the op may be destroyed once the call is made, before a queue or a group runs it.
    if (call.op) premultiply = premultiplyOf(comm, *call.op, call.datatype, call.name);
    if (call.root) checkRank(comm, *call.root, "root", call.name);
    const size_t elementSize = dataTypeSize(static_cast<DataType>(call.datatype));
    const size_t ranks = static_cast<size_t>(comm->impl->size());
    const bool isRoot = call.root && comm->impl->rank() == *call.root;
    CallMemory memory(call.name, stream);
    if (!call.sendOnRootOnly || isRoot) {
      memory.add("sendbuff", checkBuffer(call.send, call.count, elementSize,
                                         call.sendPerRank ? ranks : 1, "sendbuff", call.name));
    }
    if (!call.recvOnRootOnly || isRoot) {
      memory.add("recvbuff", checkBuffer(call.recv, call.count, elementSize,
                                         call.recvPerRank ? ranks : 1, "recvbuff", call.name));
    }
    const MemoryKind kind = memory.decide();
    args = {call.kind,
            call.send,
            call.recv,
            call.count,
            static_cast<DataType>(call.datatype),
            premultiply ? RedOp::kSum : static_cast<RedOp>(call.op.value_or(hoopSum)),
            call.root.value_or(0),
            0};
    args.memory = kind;
    args.stream = stream;
  });
  if (status != hoopSuccess) return status;
  Deferred deferred{comm, Deferred::Kind::kCollective, args, {}};
  deferred.premultiply = premultiply;
  return submit(comm, deferred);
}

}  // namespace

HOOP_API hoopResult_t hoopAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                    hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                                    hoopStream_t stream) {
  return submitChecked(
      comm, stream,
      {"hoopAllReduce", OpKind::kAllReduce, sendbuff, recvbuff, count, datatype, op, std::nullopt});
}

HOOP_API hoopResult_t hoopBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                    hoopDataType_t datatype, int root, hoopComm_t comm,
                                    hoopStream_t stream) {
  CollectiveCall call{"hoopBroadcast", OpKind::kBroadcast, sendbuff,     recvbuff,
                      count,           datatype,           std::nullopt, root};
  call.sendOnRootOnly = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopReduce(const void* sendbuff, void* recvbuff, size_t count,
                                 hoopDataType_t datatype, hoopRedOp_t op, int root, hoopComm_t comm,
                                 hoopStream_t stream) {
  CollectiveCall call{"hoopReduce", OpKind::kReduce, sendbuff, recvbuff, count, datatype, op, root};
  call.recvOnRootOnly = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                    hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream) {
  CollectiveCall call{"hoopAllGather", OpKind::kAllGather, sendbuff,     recvbuff,
                      sendcount,       datatype,           std::nullopt, std::nullopt};
  call.recvPerRank = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                        hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                                        hoopStream_t stream) {
  CollectiveCall call{
      "hoopReduceScatter", OpKind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op,
      std::nullopt};
  call.sendPerRank = true;
  return submitChecked(comm, stream, call);
}

HOOP_API hoopResult_t hoopAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                                   hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream) {
  CollectiveCall call{"hoopAllToAll", OpKind::kAllToAll, sendbuff,     recvbuff,
                      count,          datatype,          std::nullopt, std::nullopt};
  call.sendPerRank = true;
  call.recvPerRank = true;
  return submitChecked(comm, stream, call);
}

namespace {

hoopResult_t submitP2p(bool isSend, const void* buffer, size_t count, hoopDataType_t datatype,
                       int peer, hoopComm_t comm, hoopStream_t stream) {
  P2pOp op;
  MemoryKind kind = MemoryKind::kHost;
  const char* call = isSend ? "hoopSend" : "hoopRecv";
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, call);
    checkType(datatype, call);
    checkRank(comm, peer, "peer", call);
    CallMemory memory(call, stream);
    memory.add("buffer", checkBuffer(buffer, count, dataTypeSize(static_cast<DataType>(datatype)),
                                     1, "buffer", call));
    kind = memory.decide();
    op = {isSend, peer, const_cast<void*>(buffer), count, static_cast<DataType>(datatype)};
  });
  if (status != hoopSuccess) return status;
  Deferred deferred{comm, Deferred::Kind::kP2p, {}, op};
  deferred.memory = kind;
  deferred.stream = stream;
  return submit(comm, deferred);
}

}  // namespace

HOOP_API hoopResult_t hoopSend(const void* sendbuff, size_t count, hoopDataType_t datatype,
                               int peer, hoopComm_t comm, hoopStream_t stream) {
  return submitP2p(true, sendbuff, count, datatype, peer, comm, stream);
}

HOOP_API hoopResult_t hoopRecv(void* recvbuff, size_t count, hoopDataType_t datatype, int peer,
                               hoopComm_t comm, hoopStream_t stream) {
  return submitP2p(false, recvbuff, count, datatype, peer, comm, stream);
}

HOOP_API hoopResult_t hoopBarrier(hoopComm_t comm, hoopStream_t stream) {
  hoopResult_t status = guarded(comm, [&] {
    usableComm(comm, "hoopBarrier");
    if (stream != nullptr) {
      fail(hoopInvalidUsage,
           "hoopBarrier: a stream was given; the barrier blocks the calling "
           "thread and takes NULL");
    }
  });
  return status != hoopSuccess ? status : submit(comm, {comm, Deferred::Kind::kBarrier, {}, {}});
}
