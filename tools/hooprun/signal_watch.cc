#include "hooprun/signal_watch.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace hoop::run {

SignalWatch::SignalWatch() {
  sigset_t watched;
  sigemptyset(&watched);
  for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&watched, sig);
  if (int rc = ::pthread_sigmask(SIG_BLOCK, &watched, &original_mask_); rc != 0) {
    throw std::system_error(rc, std::generic_category(), "pthread_sigmask");
  }
  fd_.reset(::signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) {
    int error = errno;
    ::pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
    throw std::system_error(error, std::generic_category(), "signalfd");
  }

  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGCHLD, &action, &original_sigchld_);
  action.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &action, &original_sigpipe_);

  sigemptyset(&child_defaults_);
  if (original_sigpipe_.sa_handler != SIG_IGN) sigaddset(&child_defaults_, SIGPIPE);
}

SignalWatch::~SignalWatch() {
  ::sigaction(SIGPIPE, &original_sigpipe_, nullptr);
  ::sigaction(SIGCHLD, &original_sigchld_, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr);
}

std::vector<int> SignalWatch::take() {
  std::vector<int> signals;
  signalfd_siginfo info;
  while (true) {
    ssize_t n = ::read(fd_.get(), &info, sizeof(info));
    if (n == static_cast<ssize_t>(sizeof(info))) {
      signals.push_back(static_cast<int>(info.ssi_signo));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EAGAIN: nothing more pending
    }
  }
  return signals;
}

}  // namespace hoop::run
