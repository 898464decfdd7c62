// SignalWatch: turns SIGCHLD, SIGINT, SIGTERM and SIGHUP into readable events on a signalfd, so
// the supervisor handles them in its poll loop instead of in an async signal handler.
#pragma once

#include <signal.h>

#include <vector>

#include "hooprun/fd.h"

namespace hoop::run {

class SignalWatch {
 public:
  // Blocks the signals above (a blocked signal stays pending until the signalfd reads it, so
  // none is lost between fork and poll), makes sure SIGCHLD is not ignored (an inherited SIG_IGN
  // would let the kernel reap the ranks before we learn their status), and ignores SIGPIPE
  // (a closed stdout must not kill the launcher while ranks still run).
  SignalWatch();
  // Restores the mask and dispositions found at construction.
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  int fd() const { return fd_.get(); }

  // The signals that arrived since the last call, in arrival order (SIGCHLD may be coalesced:
  // after one, reap every child that has exited). Never blocks.
  std::vector<int> take();

  // What a child must start with: the mask hooprun was started with, and the signals to reset to
  // their default action (SIGPIPE, unless hooprun's parent had it ignored). Ignored and blocked
  // signals survive exec, so without this every rank would inherit our setup.
  const sigset_t& childMask() const { return original_mask_; }
  const sigset_t& childDefaults() const { return child_defaults_; }

 private:
  UniqueFd fd_;
  sigset_t original_mask_;
  sigset_t child_defaults_;
  struct sigaction original_sigpipe_ {};
  struct sigaction original_sigchld_ {};
};

}  // namespace hoop::run
