#include "transport/shm/cma.h"

#include <sys/uio.h>

#include <cerrno>
#include <fstream>

#include "base/error.h"

namespace hoop {

int cmaRead(pid_t pid, uint64_t remoteAddress, void* local, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec to{static_cast<char*>(local) + done, bytes - done};
    iovec from{reinterpret_cast<void*>(static_cast<uintptr_t>(remoteAddress + done)), bytes - done};
    ssize_t got = process_vm_readv(pid, &to, 1, &from, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // A short read means the next page is not readable in the sender.
    if (got == 0) return EFAULT;
    done += static_cast<size_t>(got);
  }
  return 0;
}

std::string cmaRefusalHint(int errnum) {
  std::string text = "process_vm_readv: " + errnoText(errnum);
  if (errnum != EPERM && errnum != ENOSYS) return text;
  std::ifstream scope("/proc/sys/kernel/yama/ptrace_scope");
  int value = -1;
  if (scope >> value && value > 0) {
    text += str(" (kernel.yama.ptrace_scope=", value,
                value == 1 ? " allows it only into descendant processes" : " forbids it", ")");
  } else {
    text +=
        " (another user's process, or a container without CAP_SYS_PTRACE whose seccomp "
        "profile forbids it?)";
  }
  return text;
}

}  // namespace hoop
