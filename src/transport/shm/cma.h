// Cross-memory attach: copy straight out of another process's memory with process_vm_readv, one
// copy instead of two through a shared slot. The kernel allows it only where ptrace would be
// allowed (same user, and Yama's kernel.yama.ptrace_scope, container seccomp and capabilities
// agree), so hoop probes it per pair at setup and falls back to slots.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hoop {

// Copies `bytes` from `remoteAddress` in process `pid` into `local`. Returns 0, or the errno of
// the failed call (ESRCH: the process is gone; EPERM: not allowed; EFAULT: bad address).
int cmaRead(pid_t pid, uint64_t remoteAddress, void* local, size_t bytes);

// Why process_vm_readv may have been refused, for the log line.
std::string cmaRefusalHint(int errnum);

}  // namespace hoop
