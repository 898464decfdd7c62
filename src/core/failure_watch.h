// What a communicator does about failures beyond its own connections' errors, kept apart from its
// data path:
// - the record of what this rank is doing (the operation in progress and the one before), for
//   status queries and messages;
// - a check that a long wait runs every kStatusCheckInterval: other ranks' status queries
//   answered, a failure notice another rank sent turned into this rank's error, and a peer's
//   unclaimed message for this very call with other parameters turned into hoopInvalidUsage
//   naming both calls;
// - a failure this rank found itself told to every other rank (shareFailure);
// - the hang report when HOOP_TIMEOUT passes (timedOut).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/function_ref.h"
#include "base/types.h"
#include "core/bootstrap.h"
#include "core/control_plane.h"
#include "core/failure_notice.h"
#include "core/rank_status.h"
#include "transport/connection.h"

namespace hoop {

class FailureWatch {
 public:
  // The communicator's parts the watch reads; they must outlive it. `connections`: the one that
  // carries data, by peer rank (null until used).
  struct Parts {
    int rank = 0;
    const std::vector<PeerInfo>* peers = nullptr;
    ControlPlane* control = nullptr;
    const std::vector<Connection*>* connections = nullptr;
    const std::atomic<bool>* abortRequested = nullptr;
    std::chrono::milliseconds timeout{0};
  };

  // Answers status queries and keeps failure notices from now on.
  void attach(const Parts& parts);

  // A new operation (see Communicator::beginOperation).
  void begin(const OpRecord& operation, const CallParams& call) {
    // A failed operation leaves the communicator unusable, so the one before this has completed.
    lastCompleted_ = operation_;
    operation_ = operation;
    currentCall_ = call;
  }
  const OpRecord& operation() const { return operation_; }

  // What this rank would answer a status query now.
  RankStatus status() const;

  // Whether a wait at `now` is due for check().
  bool checkDue(Clock::time_point now) const { return now >= nextCheck_; }
  // Answers status queries waiting at the listener, then throws if a failure notice came or a
  // peer called something else (see above).
  void check(Clock::time_point now, FunctionRef<std::string()> waitingFor);
  // HOOP_TIMEOUT passed: logs this rank's line, asks the others for theirs and throws hoopTimeout
  // with the hang report (or the notice's error, if one came meanwhile).
  [[noreturn]] void timedOut(FunctionRef<std::string()> waitingFor);

  // See Communicator::shareFailure and Communicator::failureNoticed.
  Error shareFailure(const Error& error);
  std::optional<Error> failureNoticed();

 private:
  void keepNotice(int fromRank, const std::vector<uint8_t>& bytes);
  // The error a kept notice makes of the current operation (`what`: "allreduce #3 failed"
  // when empty), with `detail` appended.
  Error noticeError(const std::string& detail = "", const std::string& what = "") const;
  void failIfAPeerCalledSomethingElse() const;
  bool abortRequested() const { return parts_.abortRequested->load(std::memory_order_acquire); }
  std::string describePeer(int rank) const { return (*parts_.peers)[rank].describe(); }

  Parts parts_;
  // The operation in progress and the one before it: operations run one after another, so the
  // one before has completed. Two stores per operation, read only by status queries.
  OpRecord operation_;
  OpRecord lastCompleted_;
  CallParams currentCall_;  // operation_'s parameters as its messages carry them
  // While a wait serves a status query or reports its own timeout: what it waits for.
  const FunctionRef<std::string()>* waitingFor_ = nullptr;
  RankStatus::State state_ = RankStatus::State::kWaiting;
  // The first failure notice received. A notice means the job is broken: once kept it is never
  // dropped, so the wait that sees it fails, and every later one (the C API also refuses calls
  // on a failed communicator). Looked at with the status queries, so it costs fast waits nothing.
  std::unique_ptr<FailureNotice> notice_;
  // How long a failing rank spends telling the others: a dead or stopped rank costs its slot,
  // never more than this in total.
  static constexpr auto kNoticeSendTime = std::chrono::milliseconds(1000);
  // Status queries are rare: a wait looks at the listener once per interval (one poll(2)), so a
  // query is answered within about that plus the wait's sleep slice, at no cost to fast waits.
  static constexpr auto kStatusCheckInterval = std::chrono::milliseconds(50);
  Clock::time_point nextCheck_{};
  // How long a rank that timed out waits for the others' statuses: long enough for a waiting
  // rank to notice the query (its check interval plus a sleep slice), short next to HOOP_TIMEOUT.
  static constexpr auto kStatusGatherTime = std::chrono::milliseconds(1500);
};

}  // namespace hoop
