// NCCL's collectives, sends and receives on hoop's. Each checks what NCCL's checks and hoop would
// only see later (the communicator, the datatype, fp8 in a reduction), decides where the call's
// buffers live, and submits (nccl_group.h): at once, or at ncclGroupEnd inside a group.
//
// Device buffers go to hoop with the call's stream. Host buffers, which NCCL refuses, are served
// as hoop serves them, blocking: first the stream's earlier work is waited for (so a copy into
// the buffer enqueued before the call has landed), then hoop runs the call with no stream.
// ncclGather and ncclScatter, which hoop has no call for, are groups of sends and receives.
#include <initializer_list>

#include "nccl/nccl_comm.h"
#include "nccl/nccl_group.h"

using namespace hoop;
using namespace hoop::nccl;

namespace {

// Where a call runs, decided at the call from its buffers: all or any of them device memory puts
// it on the stream (hoop refuses a call that mixes kinds, naming the buffers).
struct Placement {
  bool device = false;
  cudaStream_t stream = nullptr;

  // What hoop is given: the stream for device memory; none for host memory, once the stream's
  // earlier work has run.
  hoopResult_t prepare(hoopStream_t* given) const {
    *given = device ? stream : nullptr;
    return device ? hoopSuccess : hoopStreamSynchronize(stream);
  }
};

// `buffers` holds only the buffers the call reads or writes on this rank (NULL for the others).
Placement place(std::initializer_list<const void*> buffers, cudaStream_t stream) {
  Placement placement;
  placement.stream = stream;
  for (const void* buffer : buffers) {
    int isDevice = 0;
    if (buffer != nullptr && hoopPointerIsDevice(buffer, &isDevice) == hoopSuccess && isDevice) {
      placement.device = true;
    }
  }
  return placement;
}

// Submits run(hoopComm, stream), a call on one hoop communicator.
template <typename Run>
ncclResult_t submitOn(ncclComm* comm, const char* call, const Placement& placement, Run run) {
  const hoopComm_t hoopComm = comm->hoop;
  return submit(comm, call, placement.device, [placement, hoopComm, run]() -> hoopResult_t {
    hoopStream_t stream = nullptr;
    if (hoopResult_t ready = placement.prepare(&stream); ready != hoopSuccess) return ready;
    return run(hoopComm, stream);
  });
}

// This rank and the communicator's size, for the calls built here from sends and receives.
struct Shape {
  int rank = 0;
  int size = 0;
};

Shape shapeOf(ncclComm* comm, const char* call) {
  Shape shape;
  const hoopResult_t count = hoopCommCount(comm->hoop, &shape.size);
  const hoopResult_t rank = hoopCommUserRank(comm->hoop, &shape.rank);
  if (count == hoopInProgress || rank == hoopInProgress) {
    fail(hoopInvalidUsage, call,
         ": the non-blocking communicator is still initialising; poll ncclCommGetAsyncError "
         "until it returns ncclSuccess before using it");
  }
  passOn(count, call);
  passOn(rank, call);
  return shape;
}

void checkRoot(int root, const Shape& shape, const char* call) {
  if (root < 0 || root >= shape.size) {
    fail(hoopInvalidArgument, call, ": root ", root, " is not a rank of this communicator (",
         shape.size, " ranks)");
  }
}

// The sends and receives of a gather or scatter as one hoop group. Keeps the first failure, and
// always closes the group it opened.
class P2pGroup {
 public:
  P2pGroup() { hoopGroupStart(); }
  void send(const void* buffer, size_t count, hoopDataType_t type, int peer, hoopComm_t comm,
            hoopStream_t stream) {
    keep(hoopSend(buffer, count, type, peer, comm, stream));
  }
  void recv(void* buffer, size_t count, hoopDataType_t type, int peer, hoopComm_t comm,
            hoopStream_t stream) {
    keep(hoopRecv(buffer, count, type, peer, comm, stream));
  }
  hoopResult_t end() {
    const hoopResult_t ended = hoopGroupEnd();
    return first_ != hoopSuccess ? first_ : ended;
  }

 private:
  void keep(hoopResult_t result) {
    if (first_ == hoopSuccess && result != hoopSuccess) first_ = result;
  }
  hoopResult_t first_ = hoopSuccess;
};

}  // namespace

HOOP_NCCL_API ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
  constexpr const char* kCall = "ncclAllReduce";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = reducedType(datatype, kCall);
    const Placement where = place({count ? sendbuff : nullptr, count ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopAllReduce(sendbuff, recvbuff, count, type, static_cast<hoopRedOp_t>(op), h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclRedOp_t op, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kCall = "ncclReduce";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = reducedType(datatype, kCall);
    const Shape shape = shapeOf(c, kCall);
    checkRoot(root, shape, kCall);
    const bool isRoot = shape.rank == root;
    const Placement where =
        place({count ? sendbuff : nullptr, count && isRoot ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopReduce(sendbuff, recvbuff, count, type, static_cast<hoopRedOp_t>(op), root, h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  constexpr const char* kCall = "ncclBroadcast";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const Shape shape = shapeOf(c, kCall);
    checkRoot(root, shape, kCall);
    const bool isRoot = shape.rank == root;
    const Placement where =
        place({count && isRoot ? sendbuff : nullptr, count ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopBroadcast(sendbuff, recvbuff, count, type, root, h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

HOOP_NCCL_API ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                         ncclDataType_t datatype, ncclComm_t comm,
                                         cudaStream_t stream) {
  constexpr const char* kCall = "ncclAllGather";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const bool any = sendcount != 0;
    const Placement where = place({any ? sendbuff : nullptr, any ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopAllGather(sendbuff, recvbuff, sendcount, type, h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                             ncclDataType_t datatype, ncclRedOp_t op,
                                             ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kCall = "ncclReduceScatter";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = reducedType(datatype, kCall);
    const bool any = recvcount != 0;
    const Placement where = place({any ? sendbuff : nullptr, any ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopReduceScatter(sendbuff, recvbuff, recvcount, type, static_cast<hoopRedOp_t>(op), h,
                               s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclComm_t comm,
                                        cudaStream_t stream) {
  constexpr const char* kCall = "ncclAlltoAll";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const bool any = count != 0;
    const Placement where = place({any ? sendbuff : nullptr, any ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopAllToAll(sendbuff, recvbuff, count, type, h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream) {
  constexpr const char* kCall = "ncclGather";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const size_t bytes = count * typeSize(datatype);
    const Shape shape = shapeOf(c, kCall);
    checkRoot(root, shape, kCall);
    const bool isRoot = shape.rank == root;
    const Placement where =
        place({count ? sendbuff : nullptr, count && isRoot ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      P2pGroup group;
      if (!isRoot) {
        group.send(sendbuff, count, type, root, h, s);
        return group.end();
      }
      for (int peer = 0; peer < shape.size; ++peer) {
        char* slot = static_cast<char*>(recvbuff) + static_cast<size_t>(peer) * bytes;
        if (peer != root) {
          group.recv(slot, count, type, peer, h, s);
        } else if (slot != sendbuff) {  // in place: the root's block is already there
          group.send(sendbuff, count, type, root, h, s);
          group.recv(slot, count, type, root, h, s);
        }
      }
      return group.end();
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  constexpr const char* kCall = "ncclScatter";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const size_t bytes = count * typeSize(datatype);
    const Shape shape = shapeOf(c, kCall);
    checkRoot(root, shape, kCall);
    const bool isRoot = shape.rank == root;
    const Placement where =
        place({count && isRoot ? sendbuff : nullptr, count ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      P2pGroup group;
      if (!isRoot) {
        group.recv(recvbuff, count, type, root, h, s);
        return group.end();
      }
      for (int peer = 0; peer < shape.size; ++peer) {
        const char* block = static_cast<const char*>(sendbuff) + static_cast<size_t>(peer) * bytes;
        if (peer != root) {
          group.send(block, count, type, peer, h, s);
        } else if (block != recvbuff) {  // in place: the root's block is already there
          group.send(block, count, type, root, h, s);
          group.recv(recvbuff, count, type, root, h, s);
        }
      }
      return group.end();
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                    int peer, ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kCall = "ncclSend";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const Placement where = place({count ? sendbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopSend(sendbuff, count, type, peer, h, s);
    });
  });
}

HOOP_NCCL_API ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                    ncclComm_t comm, cudaStream_t stream) {
  constexpr const char* kCall = "ncclRecv";
  return guarded(comm, [&] {
    ncclComm* c = usableComm(comm, kCall);
    const hoopDataType_t type = movedType(datatype, kCall);
    const Placement where = place({count ? recvbuff : nullptr}, stream);
    return submitOn(c, kCall, where, [=](hoopComm_t h, hoopStream_t s) {
      return hoopRecv(recvbuff, count, type, peer, h, s);
    });
  });
}

HOOP_NCCL_SECOND_NAME(AllReduce);
HOOP_NCCL_SECOND_NAME(Reduce);
HOOP_NCCL_SECOND_NAME(Broadcast);
HOOP_NCCL_SECOND_NAME(Bcast);
HOOP_NCCL_SECOND_NAME(AllGather);
HOOP_NCCL_SECOND_NAME(ReduceScatter);
HOOP_NCCL_SECOND_NAME(AlltoAll);
HOOP_NCCL_SECOND_NAME(Gather);
HOOP_NCCL_SECOND_NAME(Scatter);
HOOP_NCCL_SECOND_NAME(Send);
HOOP_NCCL_SECOND_NAME(Recv);
