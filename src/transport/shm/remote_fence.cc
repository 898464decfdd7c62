#include "transport/shm/remote_fence.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hoop {
namespace {

long membarrier(int command) { return syscall(SYS_membarrier, command, 0, 0); }

}  // namespace

bool joinForcedFences() noexcept {
  // Registration is per process and cannot be undone; every connection asks the same answer.
  static const bool joined = [] {
    const long supported = membarrier(MEMBARRIER_CMD_QUERY);
    return supported > 0 && (supported & MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0 &&
           membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
  }();
  return joined;
}

bool forceFenceOnJoinedProcesses() noexcept {
  return membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
}

}  // namespace hoop
