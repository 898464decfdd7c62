/* The part of MPI that nccl-tests calls (startup, rank and size, and a few collectives on small
 * host buffers), served by hoop's own C API under hooprun: hoop_mpi.cc. It lets nccl-tests' MPI
 * build run one process per rank with no MPI installed, which a GPU machine without network
 * access needs. Not an MPI implementation: one communicator (MPI_COMM_WORLD, and splits that keep
 * every rank together), blocking calls, and the datatypes and operations nccl-tests uses. Anything
 * else prints why and aborts. tools/build-nccl-tests.sh builds it. */
#ifndef HOOP_TOOLS_MPI_H_
#define HOOP_TOOLS_MPI_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;

#define MPI_COMM_WORLD ((MPI_Comm)1)
#define MPI_IN_PLACE ((void*)1)
#define MPI_SUCCESS 0

#define MPI_DATATYPE_NULL ((MPI_Datatype)0)
#define MPI_BYTE ((MPI_Datatype)1)
#define MPI_CHAR ((MPI_Datatype)2)
#define MPI_INT ((MPI_Datatype)3)
#define MPI_LONG ((MPI_Datatype)4)
#define MPI_LONG_LONG ((MPI_Datatype)5)
#define MPI_DOUBLE ((MPI_Datatype)6)
#define MPI_FLOAT ((MPI_Datatype)7)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)8)
#define MPI_INT64_T ((MPI_Datatype)9)

#define MPI_SUM ((MPI_Op)1)
#define MPI_MIN ((MPI_Op)2)
#define MPI_MAX ((MPI_Op)3)

int MPI_Init(int* argc, char*** argv);
int MPI_Finalize(void);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm);
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif /* HOOP_TOOLS_MPI_H_ */
