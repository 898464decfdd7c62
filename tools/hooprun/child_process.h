// ChildProcess: one started rank process (the program itself, or the ssh client of a remote
// rank) with the read ends of its stdout and stderr pipes. It owns the process: destroying a
// ChildProcess that has not been reaped kills its process group and reaps it, so an exception
// in hooprun never leaves ranks behind.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "hooprun/fd.h"

namespace hoop::run {

// The program could not be executed (not found, not executable).
class SpawnError : public std::runtime_error {
 public:
  SpawnError(int error, std::string program);
  int error() const { return error_; }
  const std::string& program() const { return program_; }

 private:
  int error_;
  std::string program_;
};

struct SpawnRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH as execvp(3) does
  std::vector<std::string> env;   // the complete environment, NAME=value
  // Written to stdin, which is then closed; empty: /dev/null. Keep it small (the job secret):
  // it must fit the pipe buffer, as it is written before the child reads anything.
  std::string stdin_data;
  const sigset_t* mask = nullptr;      // signal mask to start with (see SignalWatch)
  const sigset_t* defaults = nullptr;  // signals to reset to SIG_DFL
  std::vector<int> cpus;               // CPUs to bind the process to; empty: hooprun's mask
};

class ChildProcess {
 public:
  // Starts the process in a process group of its own, so that signals reach everything it
  // starts (sh -c 'sleep 30' must not survive as an orphan holding our pipe open), and so that
  // a Ctrl-C on hooprun's terminal reaches only hooprun, which forwards it. Throws SpawnError
  // when argv[0] cannot be executed and std::system_error on other failures.
  static ChildProcess spawn(const SpawnRequest& request);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return !reaped_; }
  UniqueFd& stdoutPipe() { return stdout_; }
  UniqueFd& stderrPipe() { return stderr_; }

  // Sends `sig` to the process group (falling back to the process if it left its group).
  // Does nothing once reaped: the pid may belong to someone else by then.
  void signalGroup(int sig) const;

  // Called after waitpid(2) returned this pid.
  void markReaped() { reaped_ = true; }

 private:
  ChildProcess(pid_t pid, UniqueFd out, UniqueFd err) noexcept;

  pid_t pid_;
  bool reaped_ = false;
  UniqueFd stdout_;  // non-blocking read ends
  UniqueFd stderr_;
};

}  // namespace hoop::run
