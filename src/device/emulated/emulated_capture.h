// A graph capture while it is being recorded: the branches of operations that the capturing
// streams enqueue, and the edges between them, with CUDA's stream-capture rules.
//
// One stream begins the capture (the origin, branch 0). An event recorded on a capturing stream
// becomes a signal at that point of its branch (the event's record, emulated_event.h); a stream
// that waits on such an event joins the capture as a new branch that starts after the signal, and
// a capturing stream that waits on one gets a wait step in its own branch (a join back, or an
// edge between two joined branches). finish() turns the branches into what a graph replays: every
// operation of a joined branch must come before a signal the origin's end depends on (CUDA:
// cudaErrorStreamCaptureUnjoined otherwise), and what comes after the last such signal is only
// signals and waits, which are dropped so a replay is done once its origin branch is.
//
// Thread-safe: the member streams of one capture may be driven from different threads.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "device/emulated/emulated_stream.h"

namespace hoop::emulated {

// One step of a branch. A signal and the waits on it are numbered by the capture: a replay gives
// each number its own flag, so the replays of one graph never see each other's signals.
struct GraphStep {
  enum class Kind { kRun, kSignal, kWait };
  Kind kind = Kind::kRun;
  StreamOperation operation = nullptr;  // kRun only
  size_t signal = 0;                    // kSignal, kWait
};
using GraphBranch = std::vector<GraphStep>;

// A finished capture: branch 0 is the origin's, and its last step comes after every other
// branch's last step.
struct CapturedGraph {
  std::vector<GraphBranch> branches;
  size_t signals = 0;
};

class Capture {
 public:
  Capture() : graph_{.branches = std::vector<GraphBranch>(1)} {}

  // Records `operation` at the end of `branch`; false, leaving `operation` alone, once the
  // capture has ended (the caller then runs it instead: the stream left the capture with it).
  bool append(size_t branch, StreamOperation&& operation);
  // A signal at the end of `branch` (an event recorded there), and its number.
  size_t addSignal(size_t branch);
  // `branch` goes on only after `signal`.
  void addWait(size_t branch, size_t signal);
  // A new branch that starts after `signal` (a stream joining the capture), and its number.
  size_t addBranch(size_t signal);
  // The three above are hoopInvalidUsage once the capture has ended.

  // Ends the capture and returns its graph; hoopInvalidUsage (and the capture ended all the same,
  // as CUDA invalidates it) when a joined branch has operations its origin's end does not wait
  // for.
  CapturedGraph finish();
  // Ends the capture without a graph (its origin stream was destroyed).
  void abandon();
  bool ended() const;

 private:
  struct SignalAt {
    size_t branch;
    size_t position;  // of its kSignal step in the branch
  };
  void checkOpen(const char* message) const;  // hoopInvalidUsage once ended; mutex_ held

  mutable std::mutex mutex_;
  bool ended_ = false;
  CapturedGraph graph_;
  std::vector<SignalAt> signalsAt_;  // by signal number
};

}  // namespace hoop::emulated
