/* hoopConfig_t from C: HOOP_CONFIG_INITIALIZER must stay a valid C initializer, and a C caller
 * gets the same checks. Exits 0 when both hold. */
#include <stdio.h>
#include <string.h>

#include "hoop/hoop.h"

int main(void) {
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  hoopUniqueId id;
  hoopComm_t comm = NULL;
  memset(&id, 0, sizeof(id));
  config.timeoutSeconds = -2;
  if (hoopCommInitRankConfig(&comm, 1, id, 0, &config) != hoopInvalidArgument ||
      strstr(hoopGetLastError(NULL), "config.timeoutSeconds") == NULL) {
    fprintf(stderr, "FAIL: a negative timeout was not refused by name: %s\n",
            hoopGetLastError(NULL));
    return 1;
  }
  if (hoopGetUniqueId(&id) != hoopSuccess) return 1;
  config.timeoutSeconds = 5;
  config.blocking = 0;
  hoopResult_t state = hoopCommInitRankConfig(&comm, 1, id, 0, &config);
  if (state != hoopInProgress) {
    fprintf(stderr, "FAIL: non-blocking init returned %s\n", hoopGetErrorString(state));
    return 1;
  }
  do {
    hoopCommGetAsyncError(comm, &state);
  } while (state == hoopInProgress);
  int value = 7;
  int sum = 0;
  if (state != hoopSuccess ||
      hoopAllReduce(&value, &sum, 1, hoopInt32, hoopSum, comm, NULL) != hoopInProgress) {
    fprintf(stderr, "FAIL: %s\n", hoopGetLastError(comm));
    return 1;
  }
  do {
    hoopCommGetAsyncError(comm, &state);
  } while (state == hoopInProgress);
  if (state != hoopSuccess || sum != 7 || hoopCommDestroy(comm) != hoopSuccess) {
    fprintf(stderr, "FAIL: allreduce gave %d (%s)\n", sum, hoopGetErrorString(state));
    return 1;
  }
  printf("OK\n");
  return 0;
}
