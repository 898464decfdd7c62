#include "hoop_call.h"

#include <cstdio>
#include <cstdlib>

namespace hoop::perf {

void checkHoop(hoopResult_t result, const char* call, hoopComm_t comm) {
  if (result == hoopSuccess) return;
  const char* what = hoopGetErrorString(result);
  const char* detail = hoopGetLastError(comm);
  std::fprintf(stderr, "hoop-perf: %s failed: %s : %s\n", call, what != nullptr ? what : "?",
               detail != nullptr ? detail : "");
  std::fflush(stdout);
  std::exit(kExitHoopError);
}

}  // namespace hoop::perf
