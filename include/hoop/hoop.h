/* hoop: collective communication runtime. The C API, shaped like nccl.h so a framework can map it
 * one to one. Every function returns hoopResult_t; hoopGetLastError(comm) explains a failure. */
#ifndef HOOP_HOOP_H_
#define HOOP_HOOP_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOOP_MAJOR 0
#define HOOP_MINOR 1
#define HOOP_PATCH 0
/* Same encoding as NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch. */
#define HOOP_VERSION_CODE (HOOP_MAJOR * 10000 + HOOP_MINOR * 100 + HOOP_PATCH)

#define HOOP_UNIQUE_ID_BYTES 128

typedef struct hoopComm* hoopComm_t;

/* Opaque to users: root address, a random 128-bit job secret and a format version. Pass it from
 * the rank that called hoopGetUniqueId to every other rank (MPI_Bcast, a file, the environment). */
typedef struct {
  char internal[HOOP_UNIQUE_ID_BYTES];
} hoopUniqueId;

/* A cudaStream_t for device memory; NULL for host memory (the call blocks until complete). */
typedef void* hoopStream_t;

typedef enum {
  hoopSuccess = 0,
  hoopUnhandledCudaError = 1,
  hoopSystemError = 2,
  hoopInternalError = 3,
  hoopInvalidArgument = 4,
  hoopInvalidUsage = 5,
  hoopRemoteError = 6,
  hoopInProgress = 7,
  hoopTimeout = 8,
  hoopNumResults = 9
} hoopResult_t;

typedef enum {
  hoopInt8 = 0,
  hoopChar = 0,
  hoopUint8 = 1,
  hoopInt32 = 2,
  hoopInt = 2,
  hoopUint32 = 3,
  hoopInt64 = 4,
  hoopUint64 = 5,
  hoopFloat16 = 6,
  hoopHalf = 6,
  hoopFloat32 = 7,
  hoopFloat = 7,
  hoopFloat64 = 8,
  hoopDouble = 8,
  hoopBfloat16 = 9,
  hoopNumTypes = 10
} hoopDataType_t;

typedef enum {
  hoopSum = 0,
  hoopProd = 1,
  hoopMax = 2,
  hoopMin = 3,
  hoopAvg = 4,
  hoopNumOps = 5
} hoopRedOp_t;

/* Where hoopRedOpCreatePreMulSum's scalar lives. */
typedef enum {
  /* A pointer read each time a call with the op runs: on device memory calls the device reads it
   * in stream order (device memory), or the CPU when the call is enqueued (host memory); on host
   * memory calls the CPU reads it when the call runs (copying it from the device if it is device
   * memory). The scalar must stay valid while the op lives and until the calls made with it have
   * run. */
  hoopScalarDevice = 0,
  /* Copied when the op is made. */
  hoopScalarHostImmediate = 1
} hoopScalarResidence_t;

/* Version as HOOP_VERSION_CODE. */
hoopResult_t hoopGetVersion(int* version);

/* Starts the rendezvous listener in this process and describes it in *uniqueId. Call once per
 * communicator, on one process, before every rank calls hoopCommInitRank with the same id. */
hoopResult_t hoopGetUniqueId(hoopUniqueId* uniqueId);

/* Collective over nranks processes: each calls it with its own rank in [0, nranks). */
hoopResult_t hoopCommInitRank(hoopComm_t* comm, int nranks, hoopUniqueId commId, int rank);

/* Per-communicator settings for hoopCommInitRankConfig, shaped like ncclConfig_t. Start from
 * HOOP_CONFIG_INITIALIZER (its header tells hoop an initialised struct from garbage) and set only
 * what you need: a field left unset takes its environment variable, then hoop's default. */
#define HOOP_CONFIG_UNDEF_INT INT_MIN
#define HOOP_CONFIG_UNDEF_PTR NULL
#define HOOP_CONFIG_MAGIC 0x686f6f70u /* "hoop" */
typedef struct {
  /* Header: filled by HOOP_CONFIG_INITIALIZER; do not change. */
  size_t size;
  unsigned int magic;
  unsigned int version;
  /* 1 (default): calls return when done. 0: calls return hoopInProgress at once and run in
   * order on a thread of the communicator; hoopCommGetAsyncError says when they are done. */
  int blocking;
  /* Whole seconds; 0 means no limit. Default: HOOP_INIT_TIMEOUT, else 300. */
  int initTimeoutSeconds;
  /* Whole seconds for each operation; 0 means no limit. Default: HOOP_TIMEOUT, else 600. */
  int timeoutSeconds;
  /* TCP connections per peer, 1..64. Default: HOOP_SOCKET_NSTREAMS, else 1. */
  int socketStreams;
  /* Schedules to force, in HOOP_ALGO's syntax (docs/configuration.md). Default: HOOP_ALGO, else
   * none. */
  const char* algorithms;
} hoopConfig_t;

#define HOOP_CONFIG_INITIALIZER                         \
  {                                                     \
    sizeof(hoopConfig_t),      /* size */               \
        HOOP_CONFIG_MAGIC,     /* magic */              \
        HOOP_VERSION_CODE,     /* version */            \
        HOOP_CONFIG_UNDEF_INT, /* blocking */           \
        HOOP_CONFIG_UNDEF_INT, /* initTimeoutSeconds */ \
        HOOP_CONFIG_UNDEF_INT, /* timeoutSeconds */     \
        HOOP_CONFIG_UNDEF_INT, /* socketStreams */      \
        HOOP_CONFIG_UNDEF_PTR  /* algorithms */         \
  }

/* hoopCommInitRank with settings; config NULL is hoopCommInitRank itself. With config->blocking
 * 0 it returns hoopInProgress at once with *comm valid, and initialises in the background: poll
 * hoopCommGetAsyncError(*comm) until it is no longer hoopInProgress before using *comm. The config
 * is read during the call only. */
hoopResult_t hoopCommInitRankConfig(hoopComm_t* comm, int nranks, hoopUniqueId commId, int rank,
                                    hoopConfig_t* config);

/* Rank and size from the launcher's environment: hooprun (HOOP_RANK, HOOP_SIZE), OpenMPI
 * (OMPI_COMM_WORLD_*), Slurm (SLURM_PROCID, ...) or torchrun (RANK, WORLD_SIZE). The root's
 * address from HOOP_ROOT_ADDR or MASTER_ADDR/MASTER_PORT where set; else, under mpirun or
 * srun --mpi=pmix, published by rank 0 through the launcher's PMIx server with the job secret;
 * else, under srun, the step's first host and a port from the job and step ids. See
 * docs/launching.md. */
hoopResult_t hoopCommInitFromEnv(hoopComm_t* comm);

/* Closes connections and frees the communicator. Call once. On a non-blocking communicator it
 * first waits for the work queued on it to finish (each piece bounded by its timeout; use
 * hoopCommAbort to stop at once). */
hoopResult_t hoopCommDestroy(hoopComm_t comm);

/* From any thread: makes every call blocked on comm return an error, then frees comm. On a
 * non-blocking communicator it drops the queued work and stops its thread. */
hoopResult_t hoopCommAbort(hoopComm_t comm);

/* The color that leaves a rank out of every communicator hoopCommSplit makes (*newcomm NULL). */
#define HOOP_SPLIT_NOCOLOR (-1)
/* Collective over comm: every rank calls it, at the same point among comm's calls. The ranks that
 * pass the same color (>= 0) form a new communicator in *newcomm, ranked by key (equal keys keep
 * their order in comm); a rank passing HOOP_SPLIT_NOCOLOR takes part and gets NULL. config NULL:
 * the new communicators take the settings comm was created with (blocking, timeouts, socket
 * streams, algorithms); a config's set fields override those, and its unset fields inherit them.
 * The new communicators are whole communicators, independent of comm (destroy each on its own),
 * and may be split again. A wrong argument on one rank (a color below HOOP_SPLIT_NOCOLOR, newcomm
 * NULL, a bad config) fails the call on every rank with hoopInvalidArgument naming that rank, and
 * leaves comm usable; a rank that never calls it fails the others after comm's timeout. Not inside
 * a group. On a non-blocking comm the split is queued like its calls and returns hoopInProgress;
 * a non-blocking new communicator returns hoopInProgress with *newcomm valid, to poll with
 * hoopCommGetAsyncError(*newcomm) as after hoopCommInitRankConfig. */
hoopResult_t hoopCommSplit(hoopComm_t comm, int color, int key, hoopComm_t* newcomm,
                           hoopConfig_t* config);

/* Finishes the work issued on comm: the calls on device memory enqueued on streams (until the
 * device has run them) and, on a non-blocking communicator, its queue (then it returns
 * hoopInProgress and hoopCommGetAsyncError(comm) says hoopSuccess once all is done). From then on
 * comm serves only hoopCommDestroy, hoopCommAbort and queries: an operation is hoopInvalidUsage.
 * Local to this rank: it waits for no other. */
hoopResult_t hoopCommFinalize(hoopComm_t comm);

/* The queries below return hoopInProgress while a non-blocking initialisation runs. */
hoopResult_t hoopCommCount(const hoopComm_t comm, int* count);
hoopResult_t hoopCommUserRank(const hoopComm_t comm, int* rank);
/* Rank among the ranks on this host, and how many there are. */
hoopResult_t hoopCommLocalRank(const hoopComm_t comm, int* localRank);
hoopResult_t hoopCommLocalCount(const hoopComm_t comm, int* localCount);
/* Rank among the ranks that have this rank's local rank (one per host, in host order), and how
 * many there are: Horovod's cross_rank and cross_size. */
hoopResult_t hoopCommCrossRank(const hoopComm_t comm, int* crossRank);
hoopResult_t hoopCommCrossCount(const hoopComm_t comm, int* crossCount);

/* The first error an operation on comm met (hoopSuccess if none). A failed communicator stays
 * failed: destroy or abort it. On a non-blocking communicator: hoopInProgress while its
 * initialisation or any queued operation has not finished, then hoopSuccess or the first error
 * (hoopGetLastError(comm) has its message). */
hoopResult_t hoopCommGetAsyncError(hoopComm_t comm, hoopResult_t* asyncError);

/* hoop extension, for callers of a non-blocking communicator that keep several operations in
 * flight and need each one's end, not the whole queue's: *ticket = how many pieces of work
 * (operations, groups, splits, the initialisation) were queued on comm so far, so the ticket of
 * the call just made. 0 on a blocking communicator. */
hoopResult_t hoopCommQueueTicket(hoopComm_t comm, uint64_t* ticket);
/* Waits at most timeoutMs (negative: no limit) for the work queued on comm up to `ticket` to
 * have run: hoopSuccess once it has (its buffers are the caller's again), hoopInProgress when the
 * time ran out first, or the failure of a piece at or before it (hoopGetLastError(NULL) has the
 * message on this thread; pieces queued before a failed one report success). May run on any
 * thread while another issues calls on comm, but like every call except hoopCommAbort it must
 * have returned before comm is destroyed or aborted: bound it and retry. A blocking
 * communicator's calls have ended when they return: hoopSuccess at once. */
hoopResult_t hoopCommWaitTicket(hoopComm_t comm, uint64_t ticket, int timeoutMs);

/* hoop extension: the timeline, a Chrome trace (chrome://tracing, Perfetto) of this process's
 * calls and training-engine requests, as HOOP_TIMELINE writes it (docs/configuration.md). Starts
 * writing to `path` with ".<rank>" put before its extension, replacing a timeline already open;
 * the file is a complete JSON document after every event. Process-wide; hoopSystemError naming
 * the file when it cannot be created. */
hoopResult_t hoopTimelineStart(const char* path, int rank);
/* Closes the timeline's file; hoopSuccess when none was open. */
hoopResult_t hoopTimelineStop(void);

const char* hoopGetErrorString(hoopResult_t result);
/* The message of the last failed call on comm, or of this thread's last failed call when comm is
 * NULL (for failures before a communicator exists). Valid until the next call on comm. */
const char* hoopGetLastError(hoopComm_t comm);

/* hoop extension, for tools and logs: the schedule hoop would run a collective with on comm now,
 * by its HOOP_ALGO name ("ring", "oneshot", ...); the same answer on every rank, after HOOP_ALGO.
 * `count` is what the call itself would take (per rank for allgather, reducescatter and
 * alltoall). *name points to a static string. */
typedef enum {
  hoopCollAllReduce = 1,
  hoopCollBroadcast = 2,
  hoopCollReduce = 3,
  hoopCollAllGather = 4,
  hoopCollReduceScatter = 5,
  hoopCollAllToAll = 9
} hoopCollective_t;
hoopResult_t hoopCommScheduleName(hoopComm_t comm, hoopCollective_t collective, size_t count,
                                  hoopDataType_t datatype, const char** name);
/* hoop extension: *settled = 1 when that schedule is fixed for such calls from now on, 0 while
 * hoop is still timing the schedules it cannot tell apart on the first calls of their size
 * class (HOOP_TUNE_TRIAL). The same on every rank after the same calls; a benchmark that wants
 * the steady state runs calls until it reads 1, which calls of one size reach after at most
 * HOOP_MOST_CALLS_TO_SETTLE of them. With HOOP_TUNE_WATCH set, "from now on" lasts until the
 * machine changes: a settled class whose calls run 1.5x slower or faster than when it settled is
 * timed again, and reads 0 until that settles, on every rank from the same call. */
#define HOOP_MOST_CALLS_TO_SETTLE 25048
hoopResult_t hoopCommScheduleSettled(hoopComm_t comm, hoopCollective_t collective, size_t count,
                                     hoopDataType_t datatype, int* settled);

/* hoop extension, for benchmarks and tools that compare schedules on one communicator: forces
 * schedules, in HOOP_ALGO's syntax (docs/configuration.md), on the calls made on comm after it, in
 * place of the rules comm was created with (HOOP_ALGO or config->algorithms); NULL or "" leaves
 * every call to hoop's own choice. Collective: every rank calls it between the same two calls, with
 * the same text. A text hoop cannot read is hoopInvalidArgument naming the token, on every rank,
 * and leaves comm as it was; a text that differs between ranks is hoopInvalidUsage on every rank,
 * naming a rank that passed it, and fails comm like any mismatched call. Not inside a group. On
 * a non-blocking communicator it is queued like the calls below. */
hoopResult_t hoopCommSetAlgorithms(hoopComm_t comm, const char* algorithms);

/* hoop extension, for tools that check a cluster's links (tools/hoop-validate, docs/validate.md):
 * what hoopCommProbeLink measured between this rank and its peer. */
typedef struct {
  /* GB/s (1e9 bytes per second): this rank to the peer and the peer to this rank, one direction
   * at a time, each timed until the receiver acknowledged the last byte; and both directions at
   * once (their bytes together over the slower side's time). */
  double sendGBps;
  double recvGBps;
  double bidirectionalGBps;
  /* One-way latency in microseconds, half an 8-byte round trip: the median and the 99th
   * percentile of the round trips. */
  double latencyP50Us;
  double latencyP99Us;
  /* The check of every byte this rank received from the peer: 1 when all were right. Else the
   * first wrong byte: its message (0-based, in the order received), its offset in that message,
   * and what it should have been and was; -1, -1, 0, 0 when dataOk is 1. */
  int dataOk;
  int64_t firstBadMessage;
  int64_t firstBadOffset;
  uint8_t expectedByte;
  uint8_t actualByte;
} hoopLinkProbe_t;

/* hoop extension: measures the link between this rank and `peer` with hoop's own sends and
 * receives, so a figure is what a collective over that link gets: `iters` 8-byte round trips
 * (after two that warm the path), then `iters` messages of `bytes` each posted at once, one way
 * (the lower rank's first), the other way, and both ways at once. Every message carries a pattern
 * that both ranks derive from the pair and the call, which the receiver checks byte for byte, so
 * a flipped, shifted, zeroed or stale byte is found with its offset. Both ranks call it with each
 * other as the peer and the same bytes and iters, and both get the same figures (one's sendGBps
 * is the other's recvGBps); the data check is each rank's own. Pairs that share no rank may probe
 * at once. A dead peer or HOOP_TIMEOUT is an error naming the peer, and fails comm as any failed
 * operation does; a wrong argument (peer out of range or this rank, bytes 0, iters below 1,
 * result NULL) is hoopInvalidArgument and leaves comm usable. Not inside a group. On a
 * non-blocking communicator it is queued like the calls below, and *result is written when it has
 * run. */
hoopResult_t hoopCommProbeLink(hoopComm_t comm, int peer, size_t bytes, int iters,
                               hoopLinkProbe_t* result);

/* On a non-blocking communicator every call below (and hoopGroupEnd for the group's work on it)
 * checks its arguments, queues the operation and returns hoopInProgress; the buffers belong to
 * hoop until hoopCommGetAsyncError(comm) returns hoopSuccess. Calls made before the communicator
 * finished initialising are hoopInvalidUsage. After a queued operation failed, the queue is
 * dropped and every later call returns that error. */

/* In place when sendbuff == recvbuff. */
hoopResult_t hoopAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                           hoopStream_t stream);
/* Copies root's sendbuff to recvbuff on every rank; sendbuff is read on root only. */
hoopResult_t hoopBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           hoopDataType_t datatype, int root, hoopComm_t comm, hoopStream_t stream);
/* recvbuff is written on root only. */
hoopResult_t hoopReduce(const void* sendbuff, void* recvbuff, size_t count, hoopDataType_t datatype,
                        hoopRedOp_t op, int root, hoopComm_t comm, hoopStream_t stream);
/* recvbuff holds nranks * sendcount elements, rank r's at offset r * sendcount. In place when
 * sendbuff == recvbuff + rank * sendcount elements. */
hoopResult_t hoopAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream);
/* sendbuff holds nranks * recvcount elements; rank r receives block r, reduced. In place when
 * recvbuff == sendbuff + rank * recvcount elements. */
hoopResult_t hoopReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               hoopDataType_t datatype, hoopRedOp_t op, hoopComm_t comm,
                               hoopStream_t stream);
/* sendbuff holds nranks blocks of count elements; block j goes to rank j, and recvbuff block i
 * comes from rank i. In place when sendbuff == recvbuff. */
hoopResult_t hoopAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                          hoopDataType_t datatype, hoopComm_t comm, hoopStream_t stream);
/* Point to point. Outside a group each call completes on its own (so a send and its matching
 * receive between two blocking callers must be grouped, as with NCCL). */
hoopResult_t hoopSend(const void* sendbuff, size_t count, hoopDataType_t datatype, int peer,
                      hoopComm_t comm, hoopStream_t stream);
hoopResult_t hoopRecv(void* recvbuff, size_t count, hoopDataType_t datatype, int peer,
                      hoopComm_t comm, hoopStream_t stream);
/* A reduction op for comm's calls on datatype alone: every rank's input multiplied by *scalar (one
 * element of datatype, see hoopScalarResidence_t), then summed, as hoopSum would (the same bits
 * on every rank; integers wrap; fp16 and bf16 multiply in fp32 and round once). Each rank makes
 * its own, with its own scalar; the call is local. *op is hoopNumOps or above, not the value of
 * another op made in this process (until 2^31 of them were), and serves hoopAllReduce, hoopReduce
 * and hoopReduceScatter on comm: on another communicator, another datatype, or after
 * hoopRedOpDestroy it is hoopInvalidArgument naming it. Destroying comm destroys its ops. */
hoopResult_t hoopRedOpCreatePreMulSum(hoopRedOp_t* op, void* scalar, hoopDataType_t datatype,
                                      hoopScalarResidence_t residence, hoopComm_t comm);
/* Calls already made with op are not affected: they took the scalar, or its pointer, with them. */
hoopResult_t hoopRedOpDestroy(hoopRedOp_t op, hoopComm_t comm);

/* Calls between hoopGroupStart and hoopGroupEnd are issued together at hoopGroupEnd: sends and
 * receives progress concurrently, collectives run in the order they were called. Groups nest. */
hoopResult_t hoopGroupStart(void);
hoopResult_t hoopGroupEnd(void);
/* Returns once every rank of comm has called it. */
hoopResult_t hoopBarrier(hoopComm_t comm, hoopStream_t stream);

/* hoop extensions for programs that manage CUDA themselves, such as hoop's NCCL library
 * (libnccl.so.2, docs/nccl.md). Only hoopMemAlloc initialises CUDA in a process that has not
 * used it. */
/* *isDevice = 1 when `pointer` is device memory (CUDA's, or hoop's emulated device's), which hoop's
 * calls enqueue on a stream; 0 for host, pinned or managed memory, which they serve on the host. */
hoopResult_t hoopPointerIsDevice(const void* pointer, int* isDevice);
/* Returns once the work enqueued on `stream` so far has run. NULL is CUDA's legacy default stream
 * where the process uses CUDA, and nothing to wait for where it does not. A stream being captured
 * into a graph cannot be waited for: hoopInvalidUsage. */
hoopResult_t hoopStreamSynchronize(hoopStream_t stream);
/* The calling thread's current CUDA device (0 under HOOP_DEVICE_EMULATION), or -1 where there is
 * none to name: a process that has not used CUDA, or a hoop built without it. */
hoopResult_t hoopGetDevice(int* device);
/* Device memory of the current device through hoop's device runtime (cudaMalloc, or the
 * emulation's), and its release; size 0 gives NULL, and hoopMemFree(NULL) does nothing.
 * hoopInvalidUsage where hoop has no device runtime (built without CUDA, no emulation). */
hoopResult_t hoopMemAlloc(void** pointer, size_t size);
hoopResult_t hoopMemFree(void* pointer);

/* Buffer registration, as NCCL's ncclCommRegister/ncclCommDeregister: registers buff (size bytes)
 * with comm and sets *handle. A message larger than one RDMA slot whose buffers lie inside
 * registered ones on both ranks then moves straight from the sender's buffer into the
 * receiver's, with no copy through the slots (docs/rdma.md); other transports and other
 * buffers are unaffected. The memory is pinned on each RDMA device the first time a message uses
 * it there, until hoopCommDeregister(comm, handle). Registering the same range again returns
 * another handle sharing it. Local to the rank (not collective). The buffer must stay allocated
 * while registered, and no operation using it may be in flight at deregistration. */
hoopResult_t hoopCommRegister(const hoopComm_t comm, void* buff, size_t size, void** handle);
hoopResult_t hoopCommDeregister(const hoopComm_t comm, void* handle);

#ifdef __cplusplus
}
#endif

#endif /* HOOP_HOOP_H_ */
