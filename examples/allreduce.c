/* The smallest complete hoop program in C: every rank contributes its rank number and all of
 * them receive the sum. Run it with:  hooprun -np 4 ./allreduce_c */
#include <hoop/hoop.h>
#include <stdio.h>
#include <stdlib.h>

/* Every hoop call returns a result code; hoopGetLastError explains a failure. */
#define CHECK(call)                                                              \
  do {                                                                           \
    hoopResult_t result_ = (call);                                               \
    if (result_ != hoopSuccess) {                                                \
      fprintf(stderr, "%s failed: %s: %s\n", #call, hoopGetErrorString(result_), \
              hoopGetLastError(comm));                                           \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

int main(void) {
  hoopComm_t comm = NULL;
  /* Rank, size and the rendezvous address come from the launcher (hooprun, mpirun, srun or
   * torchrun). Without a launcher, use hoopGetUniqueId + hoopCommInitRank instead. */
  CHECK(hoopCommInitFromEnv(&comm));
  int rank = 0, size = 0;
  CHECK(hoopCommUserRank(comm, &rank));
  CHECK(hoopCommCount(comm, &size));

  enum { kCount = 1 << 20 };
  float* data = malloc(kCount * sizeof(float));
  for (size_t i = 0; i < kCount; ++i) data[i] = (float)rank;

  /* In place (sendbuff == recvbuff); host memory with a NULL stream blocks until done. */
  CHECK(hoopAllReduce(data, data, kCount, hoopFloat32, hoopSum, comm, NULL));

  float expected = (float)size * (float)(size - 1) / 2.0f;
  int wrong = 0;
  for (size_t i = 0; i < kCount; ++i) wrong += data[i] != expected;
  printf("rank %d of %d: sum = %.0f (%s)\n", rank, size, data[0], wrong ? "WRONG" : "ok");

  free(data);
  CHECK(hoopCommDestroy(comm));
  return wrong ? 1 : 0;
}
