// Starts real processes for multi-process tests and waits for them with a deadline, so a hung
// rank fails the test instead of hanging the suite.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exec_image.h"
#include "hoop/hoop.h"

namespace hoop::test {

struct ProcessResult {
  int status = -1;     // exit code, 128+signal, or -1 when killed at the deadline
  std::string output;  // stdout and stderr together
};

class ProcessGroup {
 public:
  ~ProcessGroup() {
    for (auto& p : processes_) {
      if (p.pid > 0) {
        ::kill(p.pid, SIGKILL);
        waitpid(p.pid, nullptr, 0);
      }
    }
  }

  // The child's argv and environment are built before fork (exec_image.h says why: a child
  // that allocated before exec hung 1 run in 10 under ASan).
  void start(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    char pattern[] = "/tmp/hoop-test-XXXXXX";
    int fd = mkstemp(pattern);
    const ExecImage image(argv, env);
    Process p;
    p.logPath = pattern;
    p.pid = fork();
    if (p.pid == 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      execvpe(image.argv()[0], image.argv(), image.envp());
      static constexpr char kFailed[] = "execvpe failed\n";
      [[maybe_unused]] ssize_t written = write(2, kFailed, sizeof(kFailed) - 1);
      _exit(127);
    }
    close(fd);
    p.startedPid = p.pid;
    processes_.push_back(p);
  }

  // Where the index-th process's stdout and stderr go (readable while it runs).
  const std::string& logPath(size_t index) const { return processes_[index].logPath; }

  // Sends `signal` to the index-th process started.
  void kill(size_t index, int signal) {
    if (processes_[index].pid > 0) ::kill(processes_[index].pid, signal);
  }

  // The index-th process's id, also after it exited.
  pid_t pid(size_t index) const { return processes_[index].startedPid; }

  // Whether the index-th process has exited (reaped here; wait() reports its status).
  bool exited(size_t index) {
    Process& p = processes_[index];
    int status = 0;
    if (p.pid > 0 && waitpid(p.pid, &status, WNOHANG) == p.pid) {
      p.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      p.pid = 0;
    }
    return p.pid == 0;
  }

  std::vector<ProcessResult> wait(std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<ProcessResult> results(processes_.size());
    size_t running = 0;
    for (size_t i = 0; i < processes_.size(); ++i) {
      results[i].status = processes_[i].status;
      if (processes_[i].pid > 0) ++running;
    }
    while (running > 0) {
      for (size_t i = 0; i < processes_.size(); ++i) {
        Process& p = processes_[i];
        if (p.pid <= 0) continue;
        int status = 0;
        if (waitpid(p.pid, &status, WNOHANG) == p.pid) {
          results[i].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          p.pid = 0;
          --running;
        }
      }
      if (running == 0) break;
      if (std::chrono::steady_clock::now() > deadline) {
        for (auto& p : processes_) {
          if (p.pid > 0) {
            ::kill(p.pid, SIGKILL);
            waitpid(p.pid, nullptr, 0);
            p.pid = 0;
          }
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    for (size_t i = 0; i < processes_.size(); ++i) {
      std::ifstream log(processes_[i].logPath);
      std::stringstream text;
      text << log.rdbuf();
      results[i].output = text.str();
      unlink(processes_[i].logPath.c_str());
    }
    return results;
  }

 private:
  struct Process {
    pid_t pid = 0;  // 0 once reaped
    pid_t startedPid = 0;
    int status = -1;  // as ProcessResult::status, once reaped by exited()
    std::string logPath;
  };
  std::vector<Process> processes_;
};

inline std::string toHex(const hoopUniqueId& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (char c : id.internal) {
    hex += kDigits[static_cast<unsigned char>(c) >> 4];
    hex += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return hex;
}

// A port on 127.0.0.1 that was free a moment ago.
inline int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace hoop::test
