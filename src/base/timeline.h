// The timeline: a Chrome trace (chrome://tracing, Perfetto) of this process's collectives, one
// complete event ("ph":"X") per operation with its start, duration and arguments, written as they
// end. On with HOOP_TIMELINE=path.json (each communicator's first rank to come up in a process
// opens it) or from a program (hoop.torch.start_timeline). Each rank writes its own file: the
// path with ".<rank>" before its extension (trace.json -> trace.0.json, trace.1.json), its events
// under pid <rank>, so the files of a job load side by side.
//
// The file is a complete JSON document after every event: the closing "]}" is rewritten behind
// each one, so an abort, a crash or a kill leaves a trace that parses. Off, an operation pays one
// relaxed atomic load (timelineOn()).
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace hoop {

namespace timeline_detail {
extern std::atomic<bool> recording;
}  // namespace timeline_detail

// The one branch every operation takes when the timeline is off.
inline bool timelineOn() { return timeline_detail::recording.load(std::memory_order_relaxed); }

// One event. `lane` becomes the trace's thread id: operations of one kind share a row.
struct TimelineEvent {
  std::string name;
  std::string category;
  std::chrono::system_clock::time_point start;
  std::chrono::steady_clock::duration duration{};
  int lane = 0;
  // Shown in the event's "args": (key, value); values are written as JSON strings.
  std::vector<std::pair<std::string, std::string>> args;
};

// Writes `event` when the timeline is on; never throws (a write error stops the timeline with a
// warning instead of failing the operation).
void timelineRecord(const TimelineEvent& event);

// Starts writing to `path` (with ".<rank>" inserted) for `rank`, replacing a timeline already
// open. Throws hoopSystemError naming the file when it cannot be created.
void timelineStart(const std::string& path, int rank);
// Closes the file (it is complete already); nothing when none is open.
void timelineStop();
// HOOP_TIMELINE, once per process: starts the timeline for `rank` when it is set and none is
// open. Called as a communicator comes up.
void timelineFromEnvironment(int rank);

// The file a rank writes for `path`: ".<rank>" before the extension, or at the end.
std::string timelinePathForRank(const std::string& path, int rank);

// When the operation that started at `began` (steady clock) started, on the wall clock that
// every rank's events share.
std::chrono::system_clock::time_point timelineWallStart(
    std::chrono::steady_clock::time_point began);

}  // namespace hoop
