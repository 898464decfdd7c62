// The hang report: after an operation timed out, one screen that says where every rank is.
// Ranks in the same state share a line ("allreduce #57 (262144 x float): ranks 0-6 waiting"),
// ranks that did not answer are named with host and pid, so the rank that holds everyone up is
// visible at a glance however many ranks the job has. Pure formatting over gathered statuses, so
// it is unit-tested without processes.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/rank_status.h"

namespace hoop {

// Every line of a report starts with this; hooprun looks for the first one.
inline constexpr const char* kHangReportTitle = "hoop hang report";

struct HangReportInput {
  int reporter = 0;                   // the rank that gathered it
  std::chrono::milliseconds timeout;  // HOOP_TIMEOUT
  std::vector<std::string> peers;     // by rank: "rank 3 (host b, pid 912)"
  // By rank, the reporter's own included; nullopt for ranks that did not answer.
  std::vector<std::optional<RankStatus>> statuses;
};

// At most kMaxHangReportLines lines of at most about 200 characters, for any number of ranks.
// The first line starts with kHangReportTitle, the others with two spaces.
std::string formatHangReport(const HangReportInput& input);
inline constexpr size_t kMaxHangReportLines = 24;

// Sorted, distinct ranks as "0-6,9,11-12"; past `maxChars` the list ends with ",... (N ranks)".
std::string formatRankRanges(const std::vector<int>& ranks, size_t maxChars = 80);

}  // namespace hoop
