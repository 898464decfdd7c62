#include "core/failure_watch.h"

#include "base/logging.h"
#include "core/hang_report.h"

namespace hoop {

void FailureWatch::attach(const Parts& parts) {
  parts_ = parts;
  const uint64_t jobTag = parts_.control->jobTag();
  parts_.control->setStatusResponder([this, jobTag] { return encodeRankStatus(status(), jobTag); });
  parts_.control->setNoticeReceiver(
      [this](int fromRank, const std::vector<uint8_t>& bytes) { keepNotice(fromRank, bytes); });
}

RankStatus FailureWatch::status() const {
  RankStatus s;
  s.rank = static_cast<uint32_t>(parts_.rank);
  s.state = state_;
  s.current = operation_;
  s.lastCompleted = lastCompleted_;
  if (waitingFor_ != nullptr) s.waitingFor = (*waitingFor_)();
  return s;
}

void FailureWatch::check(Clock::time_point now, FunctionRef<std::string()> waitingFor) {
  nextCheck_ = now + kStatusCheckInterval;
  waitingFor_ = &waitingFor;
  try {
    parts_.control->serviceListener();
  } catch (...) {
    waitingFor_ = nullptr;
    throw;
  }
  waitingFor_ = nullptr;
  if (notice_) throw noticeError();
  failIfAPeerCalledSomethingElse();
}

void FailureWatch::failIfAPeerCalledSomethingElse() const {
  // Send/recv numbers its messages per peer, so another group's message may wait here with the
  // same number; setup is no call of the user's.
  if (operation_.kind == OpKind::kSendRecv || operation_.kind == OpKind::kSetup) return;
  const std::vector<Connection*>& connections = *parts_.connections;
  for (size_t peer = 0; peer < connections.size(); ++peer) {
    if (connections[peer] == nullptr) continue;
    const std::optional<FrameTag> unclaimed = connections[peer]->peekUnclaimed();
    if (!unclaimed || unclaimed->kind != operation_.kind || unclaimed->seq != operation_.seq ||
        unclaimed->call == currentCall_) {
      continue;
    }
    fail(hoopInvalidUsage, "rank ", parts_.rank, " called ",
         describeCall(operation_.kind, operation_.seq, currentCall_), " but ",
         describePeer(static_cast<int>(peer)), " called ",
         describeCall(unclaimed->kind, unclaimed->seq, unclaimed->call),
         ": every rank must make the same call with the same count, type, op and root");
  }
}

void FailureWatch::keepNotice(int fromRank, const std::vector<uint8_t>& bytes) {
  FailureNotice notice;
  try {
    notice = decodeFailureNotice(bytes, static_cast<uint32_t>(fromRank), parts_.control->jobTag());
  } catch (const Error& e) {
    log(LogLevel::kWarn, LogSubsys::kNet, parts_.rank, "ignored a failure notice from ",
        describePeer(fromRank), ": ", e.what());
    return;
  }
  log(LogLevel::kInfo, LogSubsys::kNet, parts_.rank, "failure notice from ", describePeer(fromRank),
      " in its ", notice.operation.describe(), ": ", notice.cause);
  if (!notice_) notice_ = std::make_unique<FailureNotice>(std::move(notice));
}

std::optional<Error> FailureWatch::failureNoticed() {
  parts_.control->serviceListener();
  if (!notice_) return std::nullopt;
  return noticeError("", str("the job failed after ", operation_.describe()));
}

Error FailureWatch::noticeError(const std::string& detail, const std::string& what) const {
  const FailureNotice& notice = *notice_;
  const std::string where = notice.operation == operation_
                                ? std::string()
                                : str(", in its ", notice.operation.describe());
  return Error(
      notice.code,
      str("rank ", parts_.rank, ": ", what.empty() ? operation_.describe() + " failed" : what, ": ",
          notice.cause, " (reported by ", describePeer(static_cast<int>(notice.reporter)), where,
          ")", detail));
}

Error FailureWatch::shareFailure(const Error& error) {
  if (abortRequested() || !noticeCarries(error.code())) return error;
  // Kept before this failure: the failure is the notice's (made by noticeError, perhaps with a
  // hang report appended) or came after it; either way the others have been told.
  if (notice_) return error;
  // A notice may already wait at the listener (the reporter may be why this rank failed): then
  // its cause is the one to return, and the others have it already.
  try {
    parts_.control->serviceListener();
  } catch (const Error&) {
    // Telling the others matters more than what the listener had.
  }
  if (notice_) return noticeError();
  FailureNotice notice;
  notice.reporter = static_cast<uint32_t>(parts_.rank);
  notice.code = error.code();
  notice.operation = operation_;
  notice.cause = noticeCause(error.what(), notice.reporter);
  const size_t others = parts_.peers->size() - 1;
  try {
    const size_t told = parts_.control->sendNotice(
        encodeFailureNotice(notice, parts_.control->jobTag()), Clock::now() + kNoticeSendTime);
    log(LogLevel::kInfo, LogSubsys::kNet, parts_.rank, "told ", told, " of ", others,
        " other rank(s) that ", operation_.describe(), " failed");
  } catch (const Error& e) {
    log(LogLevel::kWarn, LogSubsys::kNet, parts_.rank, "could not tell the others that ",
        operation_.describe(), " failed: ", e.what());
  }
  return error;
}

void FailureWatch::timedOut(FunctionRef<std::string()> waitingFor) {
  const int rank = parts_.rank;
  const std::string own =
      str("rank ", rank, ": ", operation_.describe(), " timed out after ",
          std::chrono::duration_cast<std::chrono::seconds>(parts_.timeout).count(),
          " s waiting for ", waitingFor(),
          "; that rank may have hung, died, or called a different operation (HOOP_TIMEOUT)");
  log(LogLevel::kError, LogSubsys::kColl, rank, own, "; last completed ", lastCompleted_.describe(),
      "; asking the other ranks what they are doing");
  // Other ranks that time out now ask this one too: it answers while it gathers.
  state_ = RankStatus::State::kTimedOut;
  waitingFor_ = &waitingFor;
  const size_t ranks = parts_.peers->size();
  HangReportInput report;
  report.reporter = rank;
  report.timeout = parts_.timeout;
  report.statuses.resize(ranks);
  report.statuses[rank] = status();
  std::vector<int> others;
  for (int r = 0; r < static_cast<int>(ranks); ++r) {
    report.peers.push_back(describePeer(r));
    if (r != rank) others.push_back(r);
  }
  try {
    // hoopCommAbort cuts the gathering short: its promise to unblock within 100 ms holds here.
    const auto answers = parts_.control->askStatus(others, Clock::now() + kStatusGatherTime,
                                                   [this] { return abortRequested(); });
    for (size_t i = 0; i < others.size(); ++i) {
      if (answers[i].empty()) continue;
      try {
        report.statuses[others[i]] = decodeRankStatus(answers[i], static_cast<uint32_t>(others[i]),
                                                      parts_.control->jobTag());
      } catch (const Error& e) {
        log(LogLevel::kWarn, LogSubsys::kNet, rank, "ignored the status answer of ",
            describePeer(others[i]), ": ", e.what());
      }
    }
  } catch (const Error& e) {
    log(LogLevel::kWarn, LogSubsys::kNet, rank, "gathering the hang report failed: ", e.what());
  }
  waitingFor_ = nullptr;
  // A notice that came in meanwhile names the cause; the report still shows where everyone is.
  if (notice_) throw noticeError(str("\n", own, "\n", formatHangReport(report)));
  fail(hoopTimeout, own, "\n", formatHangReport(report));
}

}  // namespace hoop
