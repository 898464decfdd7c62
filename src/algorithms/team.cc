#include "algorithms/team.h"

#include <algorithm>

#include "base/logging.h"

namespace hoop {
namespace {

// Whether (kind, schedule) is new to `seen`, which then holds it: what the notes below log once.
bool firstTime(std::vector<std::pair<OpKind, const char*>>& seen, OpKind kind,
               const char* schedule) {
  const auto entry = std::make_pair(kind, schedule);
  if (std::find(seen.begin(), seen.end(), entry) != seen.end()) return false;
  seen.push_back(entry);
  return true;
}

}  // namespace

void Team::noteSchedule(OpKind kind, const char* schedule, size_t bytes, size_t pieceBytes) {
  if (!firstTime(announcedSchedules_, kind, schedule)) return;
  log(LogLevel::kInfo, LogSubsys::kColl, rank_, opKindName(kind), " uses ", schedule, " (first at ",
      bytes, " bytes, ", size(), " ranks on ", hostCount_, " host(s)",
      pieceBytes != 0 ? str(", pieces of ", pieceBytes, " bytes") : std::string(), ")");
}

void Team::noteForcedScheduleUnfit(OpKind kind, const char* schedule, size_t bytes,
                                   std::string_view servesOnly) {
  if (!firstTime(unfitForcedSchedules_, kind, schedule)) return;
  log(LogLevel::kWarn, LogSubsys::kColl, rank_, "the forced rules \"", algorithmRules().text(),
      "\" name ", schedule, " for ", opKindName(kind), " of ", bytes,
      " bytes, which it cannot serve: it serves only ", servesOnly,
      ". hoop's own choice runs such calls (said once per schedule)");
}

ScheduleTrials& Team::scheduleTrials() {
  if (scheduleTrials_ == nullptr) scheduleTrials_ = std::make_unique<ScheduleTrials>();
  return *scheduleTrials_;
}

void Team::takeShapeOf(const Team& other) {
  rank_ = other.rank_;
  size_ = other.size_;
  localRank_ = other.localRank_;
  localSize_ = other.localSize_;
  hostCount_ = other.hostCount_;
  crossRank_ = other.crossRank_;
  crossSize_ = other.crossSize_;
  ranksPerCpu_ = other.ranksPerCpu_;
  level2BytesPerCpu_ = other.level2BytesPerCpu_;
  everyPeerSharesMemory_ = other.everyPeerSharesMemory_;
  ring_ = other.ring_;
  localRing_ = other.localRing_;
  crossRing_ = other.crossRing_;
}

char* Team::staging(const Executor& executor, size_t bytes) {
  std::unique_ptr<Staging>& staging = staging_[static_cast<size_t>(executor.memory())];
  if (staging == nullptr) staging = executor.newStaging();
  return staging->reserve(bytes);
}

}  // namespace hoop
