// ProcessGroup: runs a planned job to its end. It starts every rank, relays their output line
// by line, forwards SIGINT/SIGTERM/SIGHUP, stops the whole job when one rank fails or the
// timeout passes (the signal, then SIGKILL after a grace period), and works out hooprun's
// exit code; when ranks timed out, it repeats one hang report at the end. Everything happens in
// one poll(2) loop over the ranks' pipes and a signalfd, on one thread, so there are no locks
// and no work in signal handlers.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hooprun/child_process.h"
#include "hooprun/hang_report_scanner.h"
#include "hooprun/job_plan.h"
#include "hooprun/line_relay.h"
#include "hooprun/signal_watch.h"

namespace hoop::run {

struct SupervisorSettings {
  // How long ranks get to exit after the stop signal before SIGKILL: enough to flush output and
  // close connections, short enough that a stuck job ends promptly.
  std::chrono::milliseconds kill_grace{3000};
  int stdout_fd = 1;
  int stderr_fd = 2;
};

class ProcessGroup {
 public:
  ProcessGroup(const JobPlan& plan, SignalWatch& signals, SupervisorSettings settings = {});

  // Runs the job; returns hooprun's exit code: 0 when all ranks exit 0, the first failing rank's
  // code (128+N for signal N), 124 on timeout, 128+N when hooprun received signal N, 127/126
  // when a program cannot be found/executed.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  enum class Stream { kStdout, kStderr };

  struct Rank {
    size_t rank;
    std::string host;
    ChildProcess process;
    LineRelay stdout_relay;
    LineRelay stderr_relay;
    HangReportScanner hang_report;  // over stderr, where hoop logs
  };

  // Why the job is being stopped; only the first reason counts for the exit code.
  enum class StopReason { kNone, kSpawnFailed, kRankFailed, kTimeout, kSignal };

  void startRanks();
  void handleSignal(int sig);
  void reapExited();
  void onRankExit(Rank& rank, int wait_status);
  void checkDeadlines(Clock::time_point now);
  int pollTimeoutMs(Clock::time_point now) const;

  void beginStop(StopReason reason, int sig);
  void signalRunning(int sig);
  std::vector<size_t> runningRanks() const;

  // Reads what one pipe has (once, or until empty when `drain`); closes it at end-of-file.
  void readPipe(Rank& rank, Stream stream, bool drain);
  void closePipe(Rank& rank, Stream stream);
  void emit(Stream stream, const std::string& text);
  // After a failed job: repeats the hang report of the lowest rank that printed one.
  void repeatHangReport();
  void say(const std::string& message);

  const JobPlan& plan_;
  SignalWatch& signals_;
  SupervisorSettings settings_;

  std::vector<Rank> ranks_;
  StopReason stop_reason_ = StopReason::kNone;
  int stop_signal_ = 0;
  int exit_code_ = 0;
  std::optional<Clock::time_point> timeout_deadline_;
  std::optional<Clock::time_point> kill_deadline_;
  bool stdout_broken_ = false;  // the reader of our stdout went away: drop, keep supervising
  bool stderr_broken_ = false;
};

}  // namespace hoop::run
