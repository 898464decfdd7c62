#include "base/timeline.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include "base/env.h"
#include "base/error.h"
#include "base/json_writer.h"
#include "base/logging.h"

namespace hoop {

namespace timeline_detail {
std::atomic<bool> recording{false};
}  // namespace timeline_detail

namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// What comes after the last event, so the file parses at every moment.
constexpr char kTrailer[] = "\n]}\n";

struct TimelineFile {
  std::mutex mutex;
  File file;
  std::string path;
  int rank = -1;
  long nextEventAt = 0;  // where the next event overwrites the trailer
  bool anyEvent = false;
  bool environmentRead = false;
};

TimelineFile& timeline() {
  static TimelineFile* state = new TimelineFile();  // lives until exit: events may come late
  return *state;
}

int64_t microseconds(std::chrono::system_clock::time_point when) {
  return std::chrono::duration_cast<std::chrono::microseconds>(when.time_since_epoch()).count();
}

// Writes `text` at the end of the events, then the trailer; false on a write error.
bool append(TimelineFile& t, const std::string& text) {
  std::FILE* f = t.file.get();
  if (std::fseek(f, t.nextEventAt, SEEK_SET) != 0) return false;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) return false;
  t.nextEventAt = std::ftell(f);
  if (std::fputs(kTrailer, f) < 0) return false;
  return std::fflush(f) == 0;
}

void closeLocked(TimelineFile& t) {
  timeline_detail::recording.store(false, std::memory_order_relaxed);
  t.file.reset();
  t.anyEvent = false;
  t.nextEventAt = 0;
}

}  // namespace

std::string timelinePathForRank(const std::string& path, int rank) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool hasExtension = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  if (!hasExtension) return str(path, ".", rank);
  return str(path.substr(0, dot), ".", rank, path.substr(dot));
}

std::chrono::system_clock::time_point timelineWallStart(
    std::chrono::steady_clock::time_point began) {
  const auto elapsed = std::chrono::steady_clock::now() - began;
  return std::chrono::system_clock::now() -
         std::chrono::duration_cast<std::chrono::system_clock::duration>(elapsed);
}

void timelineStart(const std::string& path, int rank) {
  TimelineFile& t = timeline();
  std::lock_guard lock(t.mutex);
  closeLocked(t);
  const std::string mine = timelinePathForRank(path, rank);
  File file(std::fopen(mine.c_str(), "w+"));
  if (!file) fail(hoopSystemError, "timeline: cannot create ", mine, ": ", errnoText(errno));
  t.file = std::move(file);
  t.path = mine;
  t.rank = rank;
  // The process's name row, then the events.
  const std::string header =
      str("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n{\"name\":\"process_name\",\"ph\":\"M\","
          "\"pid\":",
          rank, ",\"args\":{\"name\":", jsonString(str("hoop rank ", rank)), "}}");
  if (!append(t, header)) {
    t.file.reset();
    fail(hoopSystemError, "timeline: cannot write ", mine, ": ", errnoText(errno));
  }
  t.anyEvent = true;
  timeline_detail::recording.store(true, std::memory_order_relaxed);
}

void timelineStop() {
  TimelineFile& t = timeline();
  std::lock_guard lock(t.mutex);
  closeLocked(t);
}

void timelineFromEnvironment(int rank) {
  TimelineFile& t = timeline();
  {
    std::lock_guard lock(t.mutex);
    if (t.environmentRead) return;
    t.environmentRead = true;
    if (t.file) return;
  }
  const std::optional<std::string> path = envString("HOOP_TIMELINE");
  if (!path || path->empty()) return;
  timelineStart(*path, rank);
}

void timelineRecord(const TimelineEvent& event) {
  if (!timelineOn()) return;
  TimelineFile& t = timeline();
  std::lock_guard lock(t.mutex);
  if (!t.file) return;
  const auto duration =
      std::chrono::duration_cast<std::chrono::microseconds>(event.duration).count();
  std::string text =
      str(",\n{\"name\":", jsonString(event.name), ",\"cat\":", jsonString(event.category),
          ",\"ph\":\"X\",\"ts\":", microseconds(event.start), ",\"dur\":", duration,
          ",\"pid\":", t.rank, ",\"tid\":", event.lane, ",\"args\":{");
  for (size_t i = 0; i < event.args.size(); ++i) {
    text += str(i == 0 ? "" : ",", jsonString(event.args[i].first), ":",
                jsonString(event.args[i].second));
  }
  text += "}}";
  if (!append(t, text)) {
    log(LogLevel::kWarn, LogSubsys::kColl, t.rank, "timeline: writing ", t.path, " failed (",
        errnoText(errno), "); the timeline stops");
    closeLocked(t);
  }
}

}  // namespace hoop
