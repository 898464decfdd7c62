#include "transport/shm/peer_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

namespace hoop {
namespace {

// State letter from /proc/<pid>/stat ("pid (comm) S ..."); comm may contain spaces and parens,
// so the state is after the last ')'. '?' when unreadable.
char procState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return '?';
  size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return '?';
  return line[close + 2];
}

}  // namespace

PeerProcess::PeerProcess(pid_t pid, bool usePidfd) : pid_(pid) {
#ifdef SYS_pidfd_open
  // ENOSYS (old kernel) or EPERM (seccomp in some containers): fall back to kill(pid, 0).
  if (usePidfd) pidfd_.reset(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
#endif
}

bool PeerProcess::exited() const {
  if (pid_ <= 0) return false;
  if (pidfd_.valid()) {
    // A pidfd polls readable once the process has exited.
    pollfd entry{pidfd_.get(), POLLIN, 0};
    return poll(&entry, 1, 0) > 0 && (entry.revents & (POLLIN | POLLHUP)) != 0;
  }
  if (kill(pid_, 0) != 0 && errno == ESRCH) return true;
  char state = procState(pid_);
  return state == 'Z' || state == 'X';
}

}  // namespace hoop
