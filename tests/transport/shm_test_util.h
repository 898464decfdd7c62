// Two real processes for shared-memory transport tests: the test process and a forked child,
// joined by a socketpair that carries connectShm's setup exchange (and any test signalling).
// The child never returns into GoogleTest: it reports an exception's text through a pipe and
// _exits, and the parent turns that into the test result.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "transport/shm/cma.h"
#include "transport/shm/shm_setup.h"
#include "transport/tcp/socket.h"

namespace hoop::test {

using namespace std::chrono_literals;

// A SetupChannel over a stream socket, with a deadline per call so a broken test fails, not hangs.
class SocketSetupChannel : public SetupChannel {
 public:
  explicit SocketSetupChannel(UniqueFd fd) : fd_(std::move(fd)) {}

  void send(const void* data, size_t bytes) override {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      waitFor(POLLOUT);
      ssize_t n = ::send(fd_.get(), p, bytes, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(hoopRemoteError, "test channel send: ", errnoText(errno));
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }
  void recv(void* data, size_t bytes) override {
    char* p = static_cast<char*>(data);
    while (bytes > 0) {
      waitFor(POLLIN);
      ssize_t n = ::recv(fd_.get(), p, bytes, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) fail(hoopRemoteError, "test channel: the other process closed it");
      if (n < 0) fail(hoopRemoteError, "test channel recv: ", errnoText(errno));
      p += n;
      bytes -= static_cast<size_t>(n);
    }
  }
  // Small helpers for test signalling.
  void sendU64(uint64_t value) { send(&value, sizeof(value)); }
  uint64_t recvU64() {
    uint64_t value = 0;
    recv(&value, sizeof(value));
    return value;
  }

 private:
  void waitFor(short events) {
    pollfd entry{fd_.get(), events, 0};
    int ready = ::poll(&entry, 1, 10'000);
    if (ready == 0) fail(hoopTimeout, "test channel: nothing for 10 s");
  }
  UniqueFd fd_;
};

struct ChildResult {
  int status = -1;     // exit code, 128 + signal
  std::string report;  // the child's exception text, if any
};

// The forked half of a test. The destructor kills and reaps a child still running.
class ForkedChild {
 public:
  // Runs body(channel) in a child process. Any exception becomes its report and exit code 1.
  explicit ForkedChild(std::function<void(SocketSetupChannel&)> body) {
    int sockets[2];
    int report[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0 ||
        pipe2(report, O_CLOEXEC) != 0) {
      throw std::runtime_error("socketpair/pipe failed");
    }
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::close(sockets[0]);
      ::close(report[0]);
      int code = 0;
      std::string text;
      try {
        SocketSetupChannel channel{UniqueFd(sockets[1])};
        body(channel);
      } catch (const Error& e) {
        text = "hoop::Error(" + std::to_string(static_cast<int>(e.code())) + "): " + e.what();
        code = 1;
      } catch (const std::exception& e) {
        text = e.what();
        code = 1;
      }
      if (!text.empty() && ::write(report[1], text.data(), text.size()) < 0) code = 2;
      _exit(code);
    }
    ::close(sockets[1]);
    ::close(report[1]);
    report_ = UniqueFd(report[0]);
    channel_ = std::make_unique<SocketSetupChannel>(UniqueFd(sockets[0]));
  }
  ~ForkedChild() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  SocketSetupChannel& channel() { return *channel_; }

  // Waits for the child to exit (killing it after `timeout`).
  ChildResult join(std::chrono::milliseconds timeout = 10s) {
    ChildResult result;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        result.report = "(killed: still running after the timeout) ";
        break;
      }
      std::this_thread::sleep_for(1ms);
    }
    pid_ = 0;
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(report_.get(), buffer, sizeof(buffer))) > 0) result.report.append(buffer, n);
    return result;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd report_;
  std::unique_ptr<SocketSetupChannel> channel_;
};

// The CMA threshold transport tests use, well below the default, so that messages of a few
// slots already exercise the single-copy path.
inline constexpr size_t kTestCmaThreshold = 256 << 10;

// Assertions for the child process (GoogleTest macros would report in the wrong process).
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("child: " + what);
}

// Ground truth for CMA, independent of hoop's own probe: whether this process may read
// `pid`'s memory with process_vm_readv. After fork both processes have this variable at the same
// address. Yama's ptrace_scope=1 (Ubuntu's default) allows only parent -> child.
inline uint64_t cmaProbeWord = 0x686f6f70;  // "hoop"
inline bool mayReadProcess(pid_t pid) {
  uint64_t seen = 0;
  return cmaRead(pid, reinterpret_cast<uintptr_t>(&cmaProbeWord), &seen, sizeof(seen)) == 0 &&
         seen == cmaProbeWord;
}

inline std::string describeRank(int rank, bool child) {
  return "rank " + std::to_string(rank) + (child ? " (test child)" : " (test parent)");
}

// The usual shape: a ShmConnection on each side, the child running `childBody` on its own.
struct ShmPair {
  std::unique_ptr<ForkedChild> child;
  std::unique_ptr<ShmConnection> connection;  // the parent's end
  SocketSetupChannel& channel() { return child->channel(); }
};

inline ShmPair connectPair(const ShmOptions& parentOptions, const ShmOptions& childOptions,
                           std::function<void(ShmConnection&, SocketSetupChannel&)> childBody,
                           int parentRank = 0, int childRank = 1) {
  ShmPair pair;
  pair.child = std::make_unique<ForkedChild>([=](SocketSetupChannel& channel) {
    auto connection =
        connectShm(childRank, parentRank, describeRank(parentRank, false), channel, childOptions);
    childBody(*connection, channel);
  });
  pair.connection = connectShm(parentRank, childRank, describeRank(childRank, true),
                               pair.child->channel(), parentOptions);
  return pair;
}

// Calls progress() until done(); fails (throws) after `timeout`.
template <typename Done>
void driveUntil(Connection& connection, Done done, std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    // Yield when idle, as the communicator's wait loop does: with more runnable processes than
    // cores, a pure spin would hold the core the peer needs for a whole time slice.
    if (!connection.progress()) std::this_thread::yield();
    if (std::chrono::steady_clock::now() > deadline) {
      fail(hoopTimeout, "test: connection made no progress for ", timeout.count(), " ms");
    }
  }
}
inline void driveUntilIdle(Connection& connection, std::chrono::milliseconds timeout = 10s) {
  driveUntil(
      connection, [&] { return connection.idle(); }, timeout);
}

// Deterministic bytes per (direction, message, offset): any misplaced, dropped or reordered
// byte changes the comparison.
inline uint8_t patternByte(int direction, size_t message, size_t offset) {
  return static_cast<uint8_t>(offset * 131 + (offset >> 9) + message * 29 + direction * 101);
}
inline std::vector<uint8_t> pattern(int direction, size_t message, size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = patternByte(direction, message, i);
  return data;
}
// Empty when equal, else where the first difference is.
inline std::string firstDifference(const std::vector<uint8_t>& got,
                                   const std::vector<uint8_t>& want) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return "byte " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " +
             std::to_string(want[i]);
    }
  }
  return "";
}

inline uint64_t monotonicNanos() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

// Names of hoop segments present in /dev/shm.
inline std::vector<std::string> hoopSegmentsInDevShm() {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  while (dirent* entry = readdir(dir)) {
    if (std::strncmp(entry->d_name, "hoop-", 5) == 0) names.emplace_back(entry->d_name);
  }
  closedir(dir);
  return names;
}

}  // namespace hoop::test
