#include "core/hang_report.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "base/error.h"

namespace hoop {
namespace {

// Line budgets: the header, the state groups, the silent ranks, and per-rank waits for small
// jobs. Together within kMaxHangReportLines.
constexpr size_t kMaxGroupLines = 8;
constexpr size_t kMaxSilentNamed = 4;
constexpr size_t kMaxWaitLines = 8;
constexpr size_t kMaxWaitText = 120;

std::string ranksWord(const std::vector<int>& ranks) {
  return ranks.size() == 1 ? "rank " : "ranks ";
}

std::string cut(const std::string& text, size_t maxChars) {
  return text.size() <= maxChars ? text : text.substr(0, maxChars - 3) + "...";
}

// Ranks that answered, grouped by what they are in and what they completed last.
using GroupKey = std::tuple<int, uint32_t, uint64_t, int, int, uint32_t, uint64_t, int>;

GroupKey keyOf(const RankStatus& s) {
  return {static_cast<int>(s.current.kind),
          s.current.seq,
          s.current.count,
          static_cast<int>(s.current.type),
          static_cast<int>(s.lastCompleted.kind),
          s.lastCompleted.seq,
          s.lastCompleted.count,
          static_cast<int>(s.lastCompleted.type)};
}

// What every answering rank has completed is, for a collective, something the silent ranks took
// part in: the latest such operation is what the others know of them.
std::optional<OpRecord> completedByEveryAnswer(const std::vector<std::optional<RankStatus>>& all) {
  std::optional<OpRecord> oldest;
  for (const auto& s : all) {
    if (!s) continue;
    const OpRecord& done = s->lastCompleted;
    if (done.kind == OpKind::kSendRecv) continue;  // no shared sequence number
    if (!oldest || done.kind == OpKind::kSetup ||
        (oldest->kind != OpKind::kSetup && done.seq < oldest->seq)) {
      oldest = done;
    }
  }
  return oldest;
}

}  // namespace

std::string formatRankRanges(const std::vector<int>& ranks, size_t maxChars) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t end = i;
    while (end + 1 < ranks.size() && ranks[end + 1] == ranks[end] + 1) ++end;
    std::string piece = text.empty() ? str(ranks[i]) : str(",", ranks[i]);
    if (end > i) piece += str("-", ranks[end]);
    if (text.size() + piece.size() > maxChars) return str(text, ",... (", ranks.size(), " ranks)");
    text += piece;
    i = end + 1;
  }
  return text;
}

std::string formatHangReport(const HangReportInput& input) {
  const size_t n = input.statuses.size();
  std::map<GroupKey, std::vector<int>> groups;
  std::vector<int> silent;
  std::vector<int> answered;
  for (size_t r = 0; r < n; ++r) {
    if (input.statuses[r]) {
      groups[keyOf(*input.statuses[r])].push_back(static_cast<int>(r));
      answered.push_back(static_cast<int>(r));
    } else {
      silent.push_back(static_cast<int>(r));
    }
  }
  std::vector<std::string> lines;
  lines.push_back(str(kHangReportTitle, " from rank ", input.reporter, " (", n, " ranks, ",
                      answered.size(), " answered, HOOP_TIMEOUT ",
                      std::chrono::duration_cast<std::chrono::seconds>(input.timeout).count(),
                      " s):"));

  // Groups in order of their lowest rank, so rank 0's state comes first.
  std::vector<std::pair<GroupKey, std::vector<int>>> ordered(groups.begin(), groups.end());
  std::sort(ordered.begin(), ordered.end(),
            [](const auto& a, const auto& b) { return a.second.front() < b.second.front(); });
  for (size_t g = 0; g < ordered.size(); ++g) {
    const auto& ranks = ordered[g].second;
    if (g == kMaxGroupLines - 1 && ordered.size() > kMaxGroupLines) {
      std::vector<int> rest;
      for (size_t h = g; h < ordered.size(); ++h) {
        rest.insert(rest.end(), ordered[h].second.begin(), ordered[h].second.end());
      }
      std::sort(rest.begin(), rest.end());
      lines.push_back(
          str("  ", ordered.size() - g, " more states: ", ranksWord(rest), formatRankRanges(rest)));
      break;
    }
    const RankStatus& s = *input.statuses[ranks.front()];
    lines.push_back(str("  ", s.current.describe(), ": ", ranksWord(ranks), formatRankRanges(ranks),
                        " waiting; last completed ", s.lastCompleted.describe()));
  }

  const std::optional<OpRecord> known = completedByEveryAnswer(input.statuses);
  const std::string knownText =
      known ? str("; last completed ", known->describe(), " as far as the others know") : "";
  for (size_t i = 0; i < silent.size(); ++i) {
    if (i == kMaxSilentNamed - 1 && silent.size() > kMaxSilentNamed) {
      std::vector<int> rest(silent.begin() + static_cast<long>(i), silent.end());
      lines.push_back(str("  ", rest.size(), " more ranks did not answer: ", ranksWord(rest),
                          formatRankRanges(rest), knownText));
      break;
    }
    lines.push_back(str("  ", input.peers[silent[i]],
                        ": no answer (stopped, busy outside hoop, or unreachable)", knownText));
  }

  // In a small job, what each rank waits for shows the chain that leads to the culprit.
  if (answered.size() <= kMaxWaitLines) {
    for (int r : answered) {
      const RankStatus& s = *input.statuses[r];
      if (s.waitingFor.empty()) continue;
      lines.push_back(str("  rank ", r, " waits for ", cut(s.waitingFor, kMaxWaitText)));
    }
  }
  std::string text = lines.front();
  for (size_t i = 1; i < lines.size(); ++i) text += str("\n", lines[i]);
  return text;
}

}  // namespace hoop
