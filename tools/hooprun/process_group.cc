#include "hooprun/process_group.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "hooprun/status_text.h"

namespace hoop::run {
namespace {

// One read per ready pipe per loop turn keeps a chatty rank from starving the others.
constexpr size_t kReadChunk = 64 * 1024;
// When a rank has exited, what it wrote is already in the pipe; read at most this much more so
// that a leftover grandchild that keeps writing cannot hold the loop.
constexpr size_t kMaxDrain = 1024 * 1024;

}  // namespace

ProcessGroup::ProcessGroup(const JobPlan& plan, SignalWatch& signals, SupervisorSettings settings)
    : plan_(plan), signals_(signals), settings_(settings) {}

int ProcessGroup::run() {
  if (plan_.timeout) timeout_deadline_ = Clock::now() + *plan_.timeout;
  startRanks();

  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, Stream>> owners;  // for fds[1..]: which rank, which stream
  while (!runningRanks().empty()) {
    fds.assign(1, pollfd{signals_.fd(), POLLIN, 0});
    owners.clear();
    for (size_t i = 0; i < ranks_.size(); ++i) {
      if (ranks_[i].process.stdoutPipe()) {
        fds.push_back(pollfd{ranks_[i].process.stdoutPipe().get(), POLLIN, 0});
        owners.emplace_back(i, Stream::kStdout);
      }
      if (ranks_[i].process.stderrPipe()) {
        fds.push_back(pollfd{ranks_[i].process.stderrPipe().get(), POLLIN, 0});
        owners.emplace_back(i, Stream::kStderr);
      }
    }
    int ready = ::poll(fds.data(), fds.size(), pollTimeoutMs(Clock::now()));
    if (ready < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }

    if (ready > 0) {
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) readPipe(ranks_[owners[i - 1].first], owners[i - 1].second, false);
      }
      // Signals after output: a rank's last lines are printed before the news of its exit.
      if (fds[0].revents != 0) {
        for (int sig : signals_.take()) handleSignal(sig);
      }
    }
    checkDeadlines(Clock::now());
  }
  if (exit_code_ != 0) repeatHangReport();
  return exit_code_;
}

void ProcessGroup::repeatHangReport() {
  for (const Rank& rank : ranks_) {
    if (rank.hang_report.lines().empty()) continue;
    say("an operation timed out; the hang report rank " + std::to_string(rank.rank) + " printed:");
    for (const std::string& line : rank.hang_report.lines()) say(line);
    return;
  }
}

void ProcessGroup::startRanks() {
  ranks_.reserve(plan_.ranks.size());
  for (const RankLaunch& launch : plan_.ranks) {
    SpawnRequest request{launch.argv,
                         launch.env,
                         launch.stdin_data,
                         &signals_.childMask(),
                         &signals_.childDefaults(),
                         launch.cpus};
    try {
      ranks_.push_back(Rank{launch.rank,
                            launch.host,
                            ChildProcess::spawn(request),
                            LineRelay(launch.rank),
                            LineRelay(launch.rank),
                            {}});
    } catch (const SpawnError& e) {
      std::string message = e.what();
      if (!ranks_.empty()) message += "; stopping the " + countRanks(ranks_.size()) + " started";
      say(message);
      // The shell's convention: 127 when the program is not there, 126 when it cannot run.
      exit_code_ = (e.error() == ENOENT || e.error() == ENOTDIR) ? 127 : 126;
      beginStop(StopReason::kSpawnFailed, SIGTERM);
      return;
    }
  }
}

void ProcessGroup::handleSignal(int sig) {
  if (sig == SIGCHLD) {
    reapExited();
    return;
  }
  std::vector<size_t> running = runningRanks();
  if (stop_reason_ == StopReason::kNone) {
    exit_code_ = 128 + sig;
    say("received " + signalName(sig) + "; forwarding it to " + countRanks(running.size()));
    // Forward the signal itself (not always SIGTERM): a Python rank turns SIGINT into a
    // KeyboardInterrupt with a traceback, which is what the user pressing Ctrl-C wants to see.
    beginStop(StopReason::kSignal, sig);
  } else if (!running.empty()) {
    // A second Ctrl-C means "now": skip the rest of the grace period.
    say("received " + signalName(sig) + " while stopping; killing " + countRanks(running.size()) +
        " (" + formatRankList(running) + ")");
    signalRunning(SIGKILL);
    kill_deadline_.reset();
  }
}

void ProcessGroup::reapExited() {
  // SIGCHLD signals coalesce, so one may stand for several exits: reap until none is left.
  while (true) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) return;
    auto it = std::find_if(ranks_.begin(), ranks_.end(),
                           [&](const Rank& r) { return r.process.pid() == pid; });
    if (it != ranks_.end()) onRankExit(*it, status);
  }
}

void ProcessGroup::onRankExit(Rank& rank, int wait_status) {
  rank.process.markReaped();
  // Everything the rank wrote before exiting is already in its pipes: print it now, including a
  // last line without newline, and close the pipes without waiting for end-of-file (a background
  // grandchild could hold them open forever).
  for (Stream stream : {Stream::kStdout, Stream::kStderr}) {
    readPipe(rank, stream, true);
    closePipe(rank, stream);
  }
  if (exitedCleanly(wait_status) || stop_reason_ != StopReason::kNone) return;

  exit_code_ = exitCodeFor(wait_status);
  std::string message = "rank " + std::to_string(rank.rank) + " (pid " +
                        std::to_string(rank.process.pid()) + ", host " + rank.host + ") " +
                        describeWaitStatus(wait_status);
  if (size_t others = runningRanks().size(); others > 0) {
    message += "; stopping the other " + countRanks(others);
  }
  say(message);
  beginStop(StopReason::kRankFailed, SIGTERM);
}

void ProcessGroup::checkDeadlines(Clock::time_point now) {
  if (stop_reason_ == StopReason::kNone && timeout_deadline_ && now >= *timeout_deadline_) {
    std::vector<size_t> running = runningRanks();
    exit_code_ = 124;  // as timeout(1)
    say("timed out after " + formatSeconds(*plan_.timeout) + "; stopping the " +
        countRanks(running.size()) + " still running: " + formatRankList(running));
    beginStop(StopReason::kTimeout, SIGTERM);
  }
  if (kill_deadline_ && now >= *kill_deadline_) {
    kill_deadline_.reset();
    std::vector<size_t> running = runningRanks();
    if (running.empty()) return;
    say(countRanks(running.size()) + " still running " + formatSeconds(settings_.kill_grace) +
        " after " + signalName(stop_signal_) + " (" + formatRankList(running) +
        "); sending SIGKILL");
    signalRunning(SIGKILL);
  }
}

int ProcessGroup::pollTimeoutMs(Clock::time_point now) const {
  std::optional<Clock::time_point> next = kill_deadline_;
  if (stop_reason_ == StopReason::kNone && timeout_deadline_) {
    next = next ? std::min(*next, *timeout_deadline_) : *timeout_deadline_;
  }
  if (!next) return -1;
  if (*next <= now) return 0;
  // Round up: waking a millisecond early would only spin once more.
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
  return static_cast<int>(std::min<long long>(wait, 24 * 3600 * 1000));
}

void ProcessGroup::beginStop(StopReason reason, int sig) {
  stop_reason_ = reason;
  stop_signal_ = sig;
  signalRunning(sig);
  kill_deadline_ = Clock::now() + settings_.kill_grace;
}

void ProcessGroup::signalRunning(int sig) {
  for (const Rank& rank : ranks_) rank.process.signalGroup(sig);
}

std::vector<size_t> ProcessGroup::runningRanks() const {
  std::vector<size_t> running;
  for (const Rank& rank : ranks_) {
    if (rank.process.running()) running.push_back(rank.rank);
  }
  return running;
}

void ProcessGroup::readPipe(Rank& rank, Stream stream, bool drain) {
  UniqueFd& fd = stream == Stream::kStdout ? rank.process.stdoutPipe() : rank.process.stderrPipe();
  LineRelay& relay = stream == Stream::kStdout ? rank.stdout_relay : rank.stderr_relay;
  std::string buffer(kReadChunk, '\0');
  size_t total = 0;
  while (fd) {
    ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      const std::string_view bytes(buffer.data(), static_cast<size_t>(n));
      if (stream == Stream::kStderr) rank.hang_report.feed(bytes);
      emit(stream, relay.feed(bytes));
      total += static_cast<size_t>(n);
      if (!drain || total >= kMaxDrain) return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else {
      closePipe(rank, stream);  // end-of-file, or an error that will not go away
    }
  }
}

void ProcessGroup::closePipe(Rank& rank, Stream stream) {
  UniqueFd& fd = stream == Stream::kStdout ? rank.process.stdoutPipe() : rank.process.stderrPipe();
  LineRelay& relay = stream == Stream::kStdout ? rank.stdout_relay : rank.stderr_relay;
  if (!fd) return;
  fd.reset();
  emit(stream, relay.finish());
}

void ProcessGroup::emit(Stream stream, const std::string& text) {
  if (text.empty()) return;
  bool& broken = stream == Stream::kStdout ? stdout_broken_ : stderr_broken_;
  if (broken) return;
  int fd = stream == Stream::kStdout ? settings_.stdout_fd : settings_.stderr_fd;
  if (!writeAll(fd, text.data(), text.size())) broken = true;
}

void ProcessGroup::say(const std::string& message) {
  std::string line = "hooprun: " + message + "\n";
  if (!stderr_broken_ && !writeAll(settings_.stderr_fd, line.data(), line.size())) {
    stderr_broken_ = true;
  }
}

}  // namespace hoop::run
