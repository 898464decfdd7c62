/* A program as a user of mpirun or srun writes it: hoopCommInitFromEnv with no hoop variable
 * set, then every collective on integer-valued data, each checked exactly. Prints
 * "OK rank r of n" when all agree. `--hold S` makes every rank but 0 wait S seconds before
 * joining, which keeps rank 0's rendezvous open for the stranger test; `--rounds R` creates,
 * uses and destroys R communicators one after another. */
#include <hoop/hoop.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static hoopComm_t comm = NULL;
static int rank = -1;
static int wrong = 0;

#define CHECK(call)                                                                             \
  do {                                                                                          \
    hoopResult_t result_ = (call);                                                              \
    if (result_ != hoopSuccess) {                                                               \
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, hoopGetErrorString(result_), \
              hoopGetLastError(comm));                                                          \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

static void expect(const char* what, size_t at, int64_t got, int64_t want) {
  if (got == want) return;
  if (wrong++ < 5) {
    fprintf(stderr, "rank %d: WRONG %s[%zu] = %lld, expected %lld\n", rank, what, at,
            (long long)got, (long long)want);
  }
}

/* One communicator from the environment, every collective on it, then destroyed. */
static void runRound(int* sizeOut) {
  int size = 0;
  CHECK(hoopCommInitFromEnv(&comm));
  CHECK(hoopCommUserRank(comm, &rank));
  CHECK(hoopCommCount(comm, &size));
  *sizeOut = size;

  /* Large enough to take the pipelined paths, small enough to stay quick. */
  enum { kCount = 3 << 16 };
  size_t n = (size_t)size;
  int32_t* in = malloc(n * kCount * sizeof(int32_t));
  int32_t* out = malloc(n * kCount * sizeof(int32_t));
  float* f = malloc(kCount * sizeof(float));
  for (size_t i = 0; i < n * kCount; ++i) in[i] = (int32_t)((size_t)rank * 1000 + i % 997);
  for (size_t i = 0; i < kCount; ++i) f[i] = (float)(rank + (int)(i % 13));

  /* allreduce: sum of r*1000 + i%997 over r. */
  CHECK(hoopAllReduce(in, out, kCount, hoopInt32, hoopSum, comm, NULL));
  for (size_t i = 0; i < kCount; ++i) {
    expect("allreduce", i, out[i], (int64_t)(1000 * size * (size - 1) / 2 + size * (i % 997)));
  }
  CHECK(hoopAllReduce(f, f, kCount, hoopFloat32, hoopMax, comm, NULL));
  for (size_t i = 0; i < kCount; ++i)
    expect("allreduce max", i, (int64_t)f[i], size - 1 + (int)(i % 13));

  /* broadcast from the last rank. */
  CHECK(hoopBroadcast(in, out, kCount, hoopInt32, size - 1, comm, NULL));
  for (size_t i = 0; i < kCount; ++i)
    expect("broadcast", i, out[i], (size - 1) * 1000 + (int64_t)(i % 997));

  /* reduce to rank 0. */
  CHECK(hoopReduce(in, out, kCount, hoopInt32, hoopSum, 0, comm, NULL));
  if (rank == 0) {
    for (size_t i = 0; i < kCount; ++i) {
      expect("reduce", i, out[i], (int64_t)(1000 * size * (size - 1) / 2 + size * (i % 997)));
    }
  }

  /* allgather: block r is rank r's first kCount elements. */
  CHECK(hoopAllGather(in, out, kCount, hoopInt32, comm, NULL));
  for (size_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < kCount; ++i)
      expect("allgather", r * kCount + i, out[r * kCount + i], (int64_t)(r * 1000 + i % 997));
  }

  /* reduce-scatter: block `rank` of every rank's input, summed. */
  CHECK(hoopReduceScatter(in, out, kCount, hoopInt32, hoopSum, comm, NULL));
  for (size_t i = 0; i < kCount; ++i) {
    size_t at = (size_t)rank * kCount + i;
    expect("reducescatter", i, out[i], (int64_t)(1000 * size * (size - 1) / 2 + size * (at % 997)));
  }

  /* alltoall: block i of the output is block `rank` of rank i's input. */
  CHECK(hoopAllToAll(in, out, kCount, hoopInt32, comm, NULL));
  for (size_t r = 0; r < n; ++r) {
    for (size_t i = 0; i < kCount; ++i) {
      size_t at = (size_t)rank * kCount + i;
      expect("alltoall", r * kCount + i, out[r * kCount + i], (int64_t)(r * 1000 + at % 997));
    }
  }

  /* send to the next rank, receive from the previous, in one group. */
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  CHECK(hoopGroupStart());
  CHECK(hoopSend(in, kCount, hoopInt32, next, comm, NULL));
  CHECK(hoopRecv(out, kCount, hoopInt32, prev, comm, NULL));
  CHECK(hoopGroupEnd());
  for (size_t i = 0; i < kCount; ++i)
    expect("sendrecv", i, out[i], prev * 1000 + (int64_t)(i % 997));

  CHECK(hoopBarrier(comm, NULL));
  free(in);
  free(out);
  free(f);
  CHECK(hoopCommDestroy(comm));
}

int main(int argc, char** argv) {
  int holdSeconds = 0, rounds = 1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--hold") == 0) holdSeconds = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--rounds") == 0) rounds = atoi(argv[i + 1]);
  }
  const char* launcherRank = getenv("OMPI_COMM_WORLD_RANK");
  if (launcherRank == NULL) launcherRank = getenv("SLURM_PROCID");
  if (holdSeconds > 0 && launcherRank != NULL && atoi(launcherRank) != 0) sleep(holdSeconds);

  int size = 0;
  for (int round = 0; round < rounds; ++round) runRound(&size);
  if (wrong) {
    printf("rank %d of %d: WRONG (%d elements)\n", rank, size, wrong);
    return 1;
  }
  printf("OK rank %d of %d\n", rank, size);
  return 0;
}
