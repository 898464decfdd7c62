/* hoop's nccl.h: the NCCL C API as hoop's libnccl.so.2 serves it (docs/nccl.md).
 *
 * A program built against this header, or against NCCL's own, runs on hoop's libnccl.so.2: the
 * types, enum values, struct layouts and macros below are NCCL 2.28.9's ABI (the numbers are what
 * binaries carry, so they must be NCCL's exactly; tests/nccl checks each one against NCCL's header
 * where it is installed). The comments say what hoop does, which is not always what NCCL does:
 * hoop also takes host buffers, and refuses what it cannot serve with ncclInvalidUsage and a
 * message from ncclGetLastError naming the call and the reason. */
#ifndef HOOP_NCCL_H_
#define HOOP_NCCL_H_

#include <limits.h>
#include <stddef.h>

/* cudaStream_t is CUDA's pointer to struct CUstream_st. Without CUDA's headers the same
 * declaration stands in, so CPU programs compile against this header with no CUDA installed, and
 * a later #include <cuda_runtime.h> repeats an identical typedef, which C11 and C++ allow. */
#if defined(__has_include)
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#define HOOP_NCCL_HAVE_CUDA_TYPES 1
#endif
#endif
#ifndef HOOP_NCCL_HAVE_CUDA_TYPES
typedef struct CUstream_st* cudaStream_t;
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The NCCL release whose ABI this is; ncclGetVersion reports NCCL_VERSION_CODE. */
#define NCCL_MAJOR 2
#define NCCL_MINOR 28
#define NCCL_PATCH 9
#define NCCL_SUFFIX ""
#define NCCL_VERSION_CODE 22809
/* NCCL's encoding: releases up to 2.8 used major * 1000 + minor * 100 + patch, later ones
 * major * 10000 + minor * 100 + patch. */
#define NCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) : (X)*10000 + (Y)*100 + (Z))
/* Set by this header only: a program can tell it was built against hoop's nccl.h. */
#define NCCL_HOOP 1

typedef struct ncclComm* ncclComm_t;
typedef struct ncclWindow_vidmem* ncclWindow_t;
#define NCCL_COMM_NULL NULL

/* What ncclGetUniqueId fills on one rank and every rank passes to its init call. */
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  /* Also hoop's time-outs (HOOP_TIMEOUT): a peer that did not take part in time. */
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;

#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL
#define NCCL_SPLIT_NOCOLOR -1
#define NCCL_UNDEF_FLOAT -1.0f

/* ncclCommWindowRegister's flags and the alignment NCCL asks of symmetric windows. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/* ncclConfig_t.CTAPolicy values: accepted and checked, with no effect on hoop. */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/* ncclCommShrink's flags: hoop serves NCCL_SHRINK_DEFAULT only. */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

/* ncclCommRevoke's flags (hoop refuses the call). */
#define NCCL_REVOKE_DEFAULT 0x00

/* Per-communicator settings. Start from NCCL_CONFIG_INITIALIZER: its header (size, magic,
 * version) tells an initialised struct from garbage, and says which fields the program's header
 * had, so a program built against an older NCCL gets the defaults for the fields its struct
 * predates. hoop reads `blocking` (non-blocking communicators work as NCCL's), checks the others
 * for NCCL's ranges and otherwise leaves them alone: they tune NCCL's kernels and networks, which
 * hoop does not have. */
typedef struct ncclConfig_v22800 {
  /* Header: filled by NCCL_CONFIG_INITIALIZER; do not change. */
  size_t size;
  unsigned int magic;
  unsigned int version;
  /* Since 2.14. */
  int blocking;
  /* Since 2.17. */
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
  /* Since 2.18. */
  int splitShare;
  /* Since 2.25. */
  int trafficClass;
  /* Since 2.27. */
  const char* commName;
  int collnetEnable;
  int CTAPolicy;
  int shrinkShare;
  int nvlsCTAs;
  /* Since 2.28. */
  int nChannelsPerNetPeer;
  int nvlinkCentricSched;
} ncclConfig_t;

#define NCCL_CONFIG_INITIALIZER                                                \
  {                                                                            \
    sizeof(ncclConfig_t),                                 /* size */           \
        0xcafebeef,                                       /* magic */          \
        NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), /* version */        \
        NCCL_CONFIG_UNDEF_INT,                            /* blocking */       \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,     /* cga, minCTAs */   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR,     /* maxCTAs, net */   \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,     /* split, class */   \
        NCCL_CONFIG_UNDEF_PTR, NCCL_CONFIG_UNDEF_INT,     /* name, collnet */  \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,     /* CTA, shrink */    \
        NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,     /* nvls, per peer */ \
        NCCL_CONFIG_UNDEF_INT                             /* nvlink sched */   \
  }

/* ncclGroupSimulateEnd's answer (hoop refuses that call). */
typedef struct ncclSimInfo_v22200 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  float estimatedTime;
} ncclSimInfo_t;

#define NCCL_SIM_INFO_INITIALIZER                                                        \
  {                                                                                      \
    sizeof(ncclSimInfo_t), 0x74685283, NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), \
        NCCL_UNDEF_FLOAT                                                                 \
  }

typedef enum { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  /* The built-in operations; ncclRedOpCreatePreMulSum hands out values from here up. */
  ncclNumOps = 5,
  /* Keeps the enum the size of an int. */
  ncclMaxRedOp = 0x7fffffff
} ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
  /* fp8: moved (broadcast, gathers, scatter, all-to-all, send and receive) but never reduced by
   * hoop, which refuses a reduction on them with ncclInvalidUsage. */
  ncclFloat8e4m3 = 10,
  ncclFloat8e5m2 = 11,
  ncclNumTypes = 12
} ncclDataType_t;

/* Where ncclRedOpCreatePreMulSum's scalar is: read while the collective runs (device), or once
 * during the call (host). */
typedef enum { ncclScalarDevice = 0, ncclScalarHostImmediate = 1 } ncclScalarResidence_t;

/* Every function below also exists as pncclName (NCCL's profiling entry points), the same code. */

/* Device memory of the current device through hoop's device runtime; ncclInvalidUsage where hoop
 * has none (a build without CUDA). */
ncclResult_t ncclMemAlloc(void** ptr, size_t size);
ncclResult_t ncclMemFree(void* ptr);

ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);

/* Blocking unless config->blocking is 0. Inside ncclGroupStart/ncclGroupEnd the communicators are
 * created at ncclGroupEnd, together, so one thread can create several. */
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
/* ndev communicators of one process, made together on threads; devlist (or 0..ndev-1) gives
 * ncclCommCuDevice's answers. Their ranks share host buffers as any ranks do; device buffers need
 * ranks in different processes (CUDA IPC cannot open a process's own memory). */
ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
/* hoop needs one rendezvous: it takes commIds[0] and leaves the others unused. */
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId* commIds, ncclConfig_t* config);

ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
/* Refused (ncclInvalidUsage): hoop cannot stop a communicator's work and keep it. */
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
/* Collective over comm's ranks: same color, same new communicator, ordered by key then rank;
 * NCCL_SPLIT_NOCOLOR gives NULL. A NULL config inherits comm's. */
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config);
/* Called by the ranks that stay, on a communicator that still works (NCCL_SHRINK_DEFAULT);
 * NCCL_SHRINK_ABORT (shrinking a failed one) is refused. */
ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);

const char* ncclGetErrorString(ncclResult_t result);
/* The message of the last failed call on comm, or of this thread's when comm is NULL. */
const char* ncclGetLastError(ncclComm_t comm);
/* hoop reads its log settings (HOOP_DEBUG ...) once per process: nothing to reload. */
void ncclResetDebugInit(void);

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
/* The CUDA device current when comm was made; ncclInvalidUsage in a process without CUDA. */
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);

/* Registration: hoop needs none, so these only check their arguments and hand out a handle. */
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle);
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags);
ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

/* The collectives. Device buffers are enqueued on `stream`, as with NCCL. Host buffers are
 * served too: the call first waits for `stream`'s earlier work (none with a NULL stream in a
 * process without CUDA), then runs and returns when done. In place when sendbuff == recvbuff
 * (allgather and gather: sendbuff == recvbuff + rank * count; reduce-scatter and scatter:
 * recvbuff == sendbuff + rank * count). */
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);

/* Calls between ncclGroupStart and ncclGroupEnd start at ncclGroupEnd, together: sends and
 * receives progress at once, and the calls of several communicators of this process run side by
 * side. Groups nest. */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
/* Refused (ncclInvalidUsage): hoop has no time estimate to give. The group is ended without
 * running its calls. */
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

/* The profiling entry points: the same functions under NCCL's second names. */
ncclResult_t pncclMemAlloc(void** ptr, size_t size);
ncclResult_t pncclMemFree(void* ptr);
ncclResult_t pncclGetVersion(int* version);
ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId);
ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                     ncclConfig_t* config);
ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                       ncclUniqueId* commIds, ncclConfig_t* config);
ncclResult_t pncclCommFinalize(ncclComm_t comm);
ncclResult_t pncclCommDestroy(ncclComm_t comm);
ncclResult_t pncclCommAbort(ncclComm_t comm);
ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                            ncclConfig_t* config);
ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                             ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags);
const char* pncclGetErrorString(ncclResult_t result);
const char* pncclGetLastError(ncclComm_t comm);
void pncclResetDebugInit(void);
ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t pncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle);
ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle);
ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                     int winFlags);
ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                       ncclScalarResidence_t residence, ncclComm_t comm);
ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                         cudaStream_t stream);
ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, int root, ncclComm_t comm,
                            cudaStream_t stream);
ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                            ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                            cudaStream_t stream);
ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream);
ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                            ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                       ncclComm_t comm, cudaStream_t stream);
ncclResult_t pncclGroupStart(void);
ncclResult_t pncclGroupEnd(void);
ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

#ifdef __cplusplus
}
#endif

#endif /* HOOP_NCCL_H_ */
