// The peer's process, to tell a slow peer from a gone one. Shared memory has no connection to
// break: without this a dead peer would look like a quiet one until the operation timeout.
#pragma once

#include <sys/types.h>

#include "transport/tcp/socket.h"

namespace hoop {

class PeerProcess {
 public:
  // Unknown (another pid namespace, no way to verify the pid): never reports an exit, and the
  // operation timeout is what catches a dead peer.
  PeerProcess() = default;
  // `pid` must be verified to be the peer, in our pid namespace, and alive now. `usePidfd`
  // false forces the fallback (tests; kernels without pidfds take it anyway).
  explicit PeerProcess(pid_t pid, bool usePidfd = true);

  bool known() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // True once the process has terminated. Uses a pidfd where the kernel has them (Linux 5.3+):
  // it cannot be fooled by pid reuse and reports exit while the peer is still an unreaped zombie
  // (siblings under a launcher that has not waited yet), where kill(pid, 0) still succeeds.
  // Otherwise kill(pid, 0) and the state in /proc/<pid>/stat. A few microseconds: call it when
  // idle, not per message.
  bool exited() const;

 private:
  pid_t pid_ = 0;
  UniqueFd pidfd_;
};

}  // namespace hoop
