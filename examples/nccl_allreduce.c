/* A program written for NCCL (it includes nccl.h and calls only NCCL's API), which hoop's
 * libnccl.so.2 runs unchanged, on host memory: every rank contributes its rank number and all of
 * them receive the sum. The build compiles it against NCCL's own nccl.h and links NCCL's library
 * where the machine has them; hoop takes over through the library path:
 *
 *   LD_LIBRARY_PATH=build/src build/bin/hooprun -np 4 build/bin/nccl_allreduce
 *
 * As every NCCL program, it gets the unique id from rank 0; here through a file that rank 0
 * writes in /tmp (or $NCCL_EXAMPLE_DIR), named after the job's secret that hooprun makes. Rank
 * and size come from hooprun's HOOP_RANK and HOOP_SIZE. */
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    ncclResult_t result_ = (call);                                               \
    if (result_ != ncclSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, ncclGetErrorString(result_), \
              ncclGetLastError(NULL));                                           \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

static int envInt(const char* name) {
  const char* value = getenv(name);
  if (value == NULL) {
    fprintf(stderr, "%s is not set: start this program with hooprun\n", name);
    exit(2);
  }
  return atoi(value);
}

/* Rank 0's unique id, shared through a file only this job names. */
static ncclUniqueId shareId(int rank) {
  const char* dir = getenv("NCCL_EXAMPLE_DIR");
  const char* secret = getenv("HOOP_SECRET");
  char path[512], partial[520];
  snprintf(path, sizeof(path), "%s/nccl-example-%s.id", dir ? dir : "/tmp",
           secret ? secret : "job");
  snprintf(partial, sizeof(partial), "%s.partial", path);
  ncclUniqueId id;
  if (rank == 0) {
    CHECK(ncclGetUniqueId(&id));
    FILE* out = fopen(partial, "wb");
    if (out == NULL || fwrite(&id, sizeof(id), 1, out) != 1 || fclose(out) != 0) {
      perror(partial);
      exit(1);
    }
    rename(partial, path);
    return id;
  }
  for (int tries = 0; tries < 60000; ++tries) {
    FILE* in = fopen(path, "rb");
    if (in != NULL) {
      size_t got = fread(&id, sizeof(id), 1, in);
      fclose(in);
      if (got == 1) return id;
    }
    usleep(1000);
  }
  fprintf(stderr, "rank %d: no unique id in %s\n", rank, path);
  exit(1);
}

int main(void) {
  int rank = envInt("HOOP_RANK");
  int size = envInt("HOOP_SIZE");
  int version = 0;
  CHECK(ncclGetVersion(&version));
  ncclUniqueId id = shareId(rank);

  ncclComm_t comm;
  CHECK(ncclCommInitRank(&comm, size, id, rank));

  enum { kCount = 1 << 20 };
  float* data = malloc(kCount * sizeof(float));
  for (size_t i = 0; i < kCount; ++i) data[i] = (float)rank;
  /* Host buffers: NCCL itself would refuse them; hoop serves them and returns when done. */
  CHECK(ncclAllReduce(data, data, kCount, ncclFloat32, ncclSum, comm, NULL));

  float expected = (float)size * (float)(size - 1) / 2.0f;
  int wrong = 0;
  for (size_t i = 0; i < kCount; ++i) wrong += data[i] != expected;
  printf("rank %d of %d: NCCL API version %d, sum = %.0f (%s)\n", rank, size, version, data[0],
         wrong ? "WRONG" : "ok");

  free(data);
  CHECK(ncclCommDestroy(comm));
  if (rank == 0) {
    /* Every rank has the id once the communicator exists. */
    char path[512];
    const char* dir = getenv("NCCL_EXAMPLE_DIR");
    const char* secret = getenv("HOOP_SECRET");
    snprintf(path, sizeof(path), "%s/nccl-example-%s.id", dir ? dir : "/tmp",
             secret ? secret : "job");
    unlink(path);
  }
  return wrong ? 1 : 0;
}
