// What a job needs from the machine hooprun runs on: the job secret, the root port, the
// environment, the working directory and the remote-shell command. Kept apart from the plan
// (job_plan.h) so that the plan is a pure function tests can call with fixed values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hoop::run {

struct LaunchContext {
  std::string secret;                   // 32 lowercase hex digits, one per job
  uint16_t root_port = 0;               // where rank 0 will listen
  std::vector<std::string> environ;     // hooprun's environment, "NAME=value" entries
  std::string cwd;                      // hooprun's working directory
  std::vector<std::string> rsh;         // remote-shell command (ssh -o BatchMode=yes, or HOOP_RSH)
  std::string local_hostname;           // this machine's name, for remote ranks to reach it
  std::vector<std::vector<int>> cores;  // the cores hooprun may use (their CPUs), for --bind-to
};

// Gathers the context from this process. `loopback_only`: every rank runs on this machine, so
// the root port is picked on 127.0.0.1 rather than on all interfaces. Throws std::system_error.
LaunchContext currentLaunchContext(bool loopback_only);

// 16 bytes from getrandom(2) as 32 lowercase hex digits. Throws std::system_error.
std::string makeSecret();

// Lowercase hex of `size` bytes.
std::string hexEncode(const unsigned char* bytes, size_t size);

// Binds a TCP socket to port 0, reads the port the kernel chose and closes the socket.
// There is a small race: another process may take the port between this close and rank 0's
// bind. The window is short (the ranks start right away) and the kernel does not hand the same
// ephemeral port out again soon; rank 0 reports a clear bind error if it happens anyway.
// For remote rank 0 the port is only known to be free on this machine.
uint16_t pickFreePort(bool loopback_only);

}  // namespace hoop::run
