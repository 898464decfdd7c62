// mpi.h's calls on hoop's C API: MPI_Init joins the job hooprun started (hoopCommInitFromEnv),
// and every collective is the matching hoop call on host memory. Failures print hoop's message
// and abort, as MPI's default error handler does.
#include <hoop/hoop.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpi.h"

namespace {

hoopComm_t world = nullptr;

[[noreturn]] void die(const char* call, const char* why) {
  std::fprintf(stderr, "hoop's MPI stand-in: %s: %s\n", call, why);
  std::abort();
}

void check(hoopResult_t result, const char* call) {
  if (result != hoopSuccess) die(call, hoopGetLastError(world));
}

hoopComm_t commOf(MPI_Comm comm, const char* call) {
  if (world == nullptr) die(call, "MPI_Init has not been called");
  if (comm != MPI_COMM_WORLD) die(call, "the only communicator is MPI_COMM_WORLD");
  return world;
}

struct Type {
  hoopDataType_t hoop;
  size_t bytes;
};

Type typeOf(MPI_Datatype type, const char* call) {
  switch (type) {
    case MPI_BYTE:
    case MPI_CHAR: return {hoopUint8, 1};
    case MPI_INT: return {hoopInt32, 4};
    case MPI_LONG:
    case MPI_LONG_LONG:
    case MPI_INT64_T: return {hoopInt64, 8};
    case MPI_UNSIGNED_LONG: return {hoopUint64, 8};
    case MPI_DOUBLE: return {hoopFloat64, 8};
    case MPI_FLOAT: return {hoopFloat32, 4};
    default: die(call, "a datatype this stand-in does not have");
  }
}

hoopRedOp_t opOf(MPI_Op op, const char* call) {
  switch (op) {
    case MPI_SUM: return hoopSum;
    case MPI_MIN: return hoopMin;
    case MPI_MAX: return hoopMax;
    default: die(call, "a reduction this stand-in does not have");
  }
}

int sizeOf(hoopComm_t comm) {
  int size = 0;
  check(hoopCommCount(comm, &size), "MPI_Comm_size");
  return size;
}

int rankOf(hoopComm_t comm) {
  int rank = 0;
  check(hoopCommUserRank(comm, &rank), "MPI_Comm_rank");
  return rank;
}

}  // namespace

extern "C" {

int MPI_Init(int*, char***) {
  if (world != nullptr) die("MPI_Init", "called twice");
  const hoopResult_t result = hoopCommInitFromEnv(&world);
  if (result != hoopSuccess) {
    die("MPI_Init", hoopGetLastError(nullptr));  // start the program under hooprun
  }
  return MPI_SUCCESS;
}

int MPI_Finalize(void) {
  if (world != nullptr) check(hoopCommDestroy(world), "MPI_Finalize");
  world = nullptr;
  return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  *size = sizeOf(commOf(comm, "MPI_Comm_size"));
  return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  *rank = rankOf(commOf(comm, "MPI_Comm_rank"));
  return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int, MPI_Comm* newcomm) {
  hoopComm_t c = commOf(comm, "MPI_Comm_split");
  // Only a split that keeps every rank together (nccl-tests' default) is served.
  int lowest = color;
  int highest = color;
  check(hoopAllReduce(&color, &lowest, 1, hoopInt32, hoopMin, c, nullptr), "MPI_Comm_split");
  check(hoopAllReduce(&color, &highest, 1, hoopInt32, hoopMax, c, nullptr), "MPI_Comm_split");
  if (lowest != highest) {
    die("MPI_Comm_split",
        "ranks gave different colors; this stand-in keeps every rank together "
        "(leave NCCL_TESTS_SPLIT and NCCL_TESTS_SPLIT_MASK unset)");
  }
  *newcomm = MPI_COMM_WORLD;
  return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm* comm) {
  commOf(*comm, "MPI_Comm_free");
  return MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm) {
  check(hoopBarrier(commOf(comm, "MPI_Barrier"), nullptr), "MPI_Barrier");
  return MPI_SUCCESS;
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Type t = typeOf(type, "MPI_Bcast");
  check(hoopBroadcast(buffer, buffer, static_cast<size_t>(count), t.hoop, root,
                      commOf(comm, "MPI_Bcast"), nullptr),
        "MPI_Bcast");
  return MPI_SUCCESS;
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const Type t = typeOf(type, "MPI_Allreduce");
  const void* source = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
  check(hoopAllReduce(source, recvbuf, static_cast<size_t>(count), t.hoop,
                      opOf(op, "MPI_Allreduce"), commOf(comm, "MPI_Allreduce"), nullptr),
        "MPI_Allreduce");
  return MPI_SUCCESS;
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  hoopComm_t c = commOf(comm, "MPI_Allgather");
  const Type t = typeOf(recvtype, "MPI_Allgather");
  const size_t block = static_cast<size_t>(recvcount) * t.bytes;
  char* mine = static_cast<char*>(recvbuf) + static_cast<size_t>(rankOf(c)) * block;
  if (sendbuf != MPI_IN_PLACE) {
    if (static_cast<size_t>(sendcount) * typeOf(sendtype, "MPI_Allgather").bytes != block) {
      die("MPI_Allgather", "send and receive blocks of different sizes");
    }
    std::memmove(mine, sendbuf, block);
  }
  check(hoopAllGather(mine, recvbuf, block, hoopUint8, c, nullptr), "MPI_Allgather");
  return MPI_SUCCESS;
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int,
               MPI_Datatype, int root, MPI_Comm comm) {
  hoopComm_t c = commOf(comm, "MPI_Gather");
  const size_t block = static_cast<size_t>(sendcount) * typeOf(sendtype, "MPI_Gather").bytes;
  // Everyone gathers (the calls are small); the root keeps the result.
  std::vector<char> all(block * static_cast<size_t>(sizeOf(c)));
  check(hoopAllGather(sendbuf, all.data(), block, hoopUint8, c, nullptr), "MPI_Gather");
  if (rankOf(c) == root) std::memcpy(recvbuf, all.data(), all.size());
  return MPI_SUCCESS;
}

}  // extern "C"
