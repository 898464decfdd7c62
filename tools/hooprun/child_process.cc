#include "hooprun/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "hooprun/cpu_binding.h"

namespace hoop::run {
namespace {

// posix_spawn's C structures, released on every path.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    ::posix_spawn_file_actions_init(&actions_);
    ::posix_spawnattr_init(&attr_);
  }
  ~SpawnAttributes() {
    ::posix_spawnattr_destroy(&attr_);
    ::posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  posix_spawn_file_actions_t actions_;
  posix_spawnattr_t attr_;
};

void check(int rc, const char* what) {
  if (rc != 0) throw std::system_error(rc, std::generic_category(), what);
}

std::vector<char*> cStrings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void setNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw std::system_error(errno, std::generic_category(), "fcntl");
  }
}

}  // namespace

SpawnError::SpawnError(int error, std::string program)
    : std::runtime_error("cannot execute '" + program + "': " + std::strerror(error)),
      error_(error),
      program_(std::move(program)) {}

ChildProcess::ChildProcess(pid_t pid, UniqueFd out, UniqueFd err) noexcept
    : pid_(pid), stdout_(std::move(out)), stderr_(std::move(err)) {}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_),
      reaped_(std::exchange(other.reaped_, true)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)) {}

ChildProcess::~ChildProcess() {
  if (reaped_) return;
  signalGroup(SIGKILL);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

void ChildProcess::signalGroup(int sig) const {
  if (reaped_) return;
  if (::kill(-pid_, sig) != 0) ::kill(pid_, sig);
}

ChildProcess ChildProcess::spawn(const SpawnRequest& request) {
  // Every pipe end is close-on-exec; dup2 in the file actions clears that flag on the copies
  // that become the child's 0, 1 and 2, and nothing else leaks into the child.
  Pipe out = makePipe();
  Pipe err = makePipe();
  Pipe in;
  if (!request.stdin_data.empty()) in = makePipe();

  SpawnAttributes spawn;
  if (in.read) {
    check(::posix_spawn_file_actions_adddup2(&spawn.actions_, in.read.get(), STDIN_FILENO),
          "posix_spawn_file_actions_adddup2");
  } else {
    check(
        ::posix_spawn_file_actions_addopen(&spawn.actions_, STDIN_FILENO, "/dev/null", O_RDONLY, 0),
        "posix_spawn_file_actions_addopen");
  }
  check(::posix_spawn_file_actions_adddup2(&spawn.actions_, out.write.get(), STDOUT_FILENO),
        "posix_spawn_file_actions_adddup2");
  check(::posix_spawn_file_actions_adddup2(&spawn.actions_, err.write.get(), STDERR_FILENO),
        "posix_spawn_file_actions_adddup2");

  short flags = POSIX_SPAWN_SETPGROUP;
  check(::posix_spawnattr_setpgroup(&spawn.attr_, 0), "posix_spawnattr_setpgroup");
  if (request.mask) {
    flags |= POSIX_SPAWN_SETSIGMASK;
    check(::posix_spawnattr_setsigmask(&spawn.attr_, request.mask), "posix_spawnattr_setsigmask");
  }
  if (request.defaults) {
    flags |= POSIX_SPAWN_SETSIGDEF;
    check(::posix_spawnattr_setsigdefault(&spawn.attr_, request.defaults),
          "posix_spawnattr_setsigdefault");
  }
  check(::posix_spawnattr_setflags(&spawn.attr_, flags), "posix_spawnattr_setflags");

  std::vector<char*> argv = cStrings(request.argv);
  std::vector<char*> envp = cStrings(request.env);
  pid_t pid = -1;
  const ScopedCpuBinding binding(request.cpus);  // inherited by the child, then undone here
  // glibc's posix_spawnp returns only after the exec succeeded or failed, and reports an exec
  // failure (ENOENT, EACCES) as its result, so a missing program is known here, not later as a
  // mysterious exit status 127.
  int rc = ::posix_spawnp(&pid, argv[0], &spawn.actions_, &spawn.attr_, argv.data(), envp.data());
  if (rc != 0) throw SpawnError(rc, request.argv[0]);

  ChildProcess child(pid, std::move(out.read), std::move(err.read));
  setNonBlocking(child.stdout_.get());
  setNonBlocking(child.stderr_.get());
  if (in.write) {
    // A few dozen bytes fit in the pipe buffer, so this never blocks. If the child is already
    // gone the write fails with EPIPE (SIGPIPE is ignored) and its exit status tells the story.
    writeAll(in.write.get(), request.stdin_data.data(), request.stdin_data.size());
  }
  return child;
}

}  // namespace hoop::run
