#include "device/emulated/emulated_capture.h"

#include <utility>

#include "base/error.h"

namespace hoop::emulated {

bool Capture::append(size_t branch, StreamOperation&& operation) {
  std::lock_guard lock(mutex_);
  if (ended_) return false;
  graph_.branches[branch].push_back(
      {.kind = GraphStep::Kind::kRun, .operation = std::move(operation)});
  return true;
}

size_t Capture::addSignal(size_t branch) {
  std::lock_guard lock(mutex_);
  checkOpen("recordEvent: the capturing stream's capture has ended");
  const size_t signal = graph_.signals++;
  signalsAt_.push_back({branch, graph_.branches[branch].size()});
  graph_.branches[branch].push_back({.kind = GraphStep::Kind::kSignal, .signal = signal});
  return signal;
}

void Capture::addWait(size_t branch, size_t signal) {
  std::lock_guard lock(mutex_);
  checkOpen("streamWaitEvent: the capturing stream's capture has ended");
  graph_.branches[branch].push_back({.kind = GraphStep::Kind::kWait, .signal = signal});
}

size_t Capture::addBranch(size_t signal) {
  std::lock_guard lock(mutex_);
  checkOpen("streamWaitEvent: the event was last recorded in a graph capture that has ended");
  graph_.branches.push_back({{.kind = GraphStep::Kind::kWait, .signal = signal}});
  return graph_.branches.size() - 1;
}

void Capture::checkOpen(const char* message) const {
  if (ended_) fail(hoopInvalidUsage, message, " (emulated device runtime)");
}

CapturedGraph Capture::finish() {
  std::lock_guard lock(mutex_);
  if (ended_) fail(hoopInvalidUsage, "endCapture: the capture has already ended");
  ended_ = true;
  CapturedGraph graph = std::move(graph_);
  const std::vector<SignalAt> signalsAt = std::move(signalsAt_);
  std::vector<GraphBranch>& branches = graph.branches;

  // kept[b]: how many of branch b's first steps the origin's end depends on. The origin's end
  // depends on all of the origin, and on a signal's branch up to and including the signal as
  // soon as a kept step waits on it; scanned[b] says how far kept waits have been followed.
  std::vector<size_t> kept(branches.size(), 0), scanned(branches.size(), 0);
  kept[0] = branches[0].size();
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t b = 0; b < branches.size(); ++b) {
      for (; scanned[b] < kept[b]; ++scanned[b]) {
        const GraphStep& step = branches[b][scanned[b]];
        if (step.kind != GraphStep::Kind::kWait) continue;
        const SignalAt at = signalsAt[step.signal];
        if (kept[at.branch] <= at.position) {
          kept[at.branch] = at.position + 1;
          grew = true;
        }
      }
    }
  }

  for (size_t b = 1; b < branches.size(); ++b) {
    for (size_t position = kept[b]; position < branches[b].size(); ++position) {
      if (branches[b][position].kind == GraphStep::Kind::kRun) {
        fail(hoopInvalidUsage, "endCapture: a stream that joined the capture (branch ", b,
             ") has operations after its last join back into the capturing stream (CUDA: "
             "cudaErrorStreamCaptureUnjoined); record an event on it after its last operation "
             "and make the capturing stream wait on that event");
      }
    }
    // Only signals and waits nothing kept depends on: a signal a kept step waits for is kept.
    branches[b].resize(kept[b]);
  }
  return graph;
}

void Capture::abandon() {
  std::lock_guard lock(mutex_);
  ended_ = true;
  graph_ = {};
  signalsAt_.clear();
}

bool Capture::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

}  // namespace hoop::emulated
