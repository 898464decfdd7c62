#include "algorithm.h"

#include <cstdlib>

namespace hoop::perf {

std::string transportInUse() {
  const char* forced = std::getenv("HOOP_TRANSPORT");
  return forced != nullptr && forced[0] != '\0' ? forced : "auto";
}

std::vector<std::string_view> schedulesOf(Collective coll) {
  switch (coll) {
    case Collective::kAllReduce:
      return {"ring",        "direct",       "oneshot", "twoshot",
              "recdoubling", "rabenseifner", "tree",    "hierarchical"};
    case Collective::kAllGather: return {"ring", "bruck", "hierarchical"};
    case Collective::kBroadcast: return {"ring", "tree", "hierarchical"};
    case Collective::kReduceScatter: return {"ring"};
    case Collective::kReduce: return {"ring", "tree"};
    case Collective::kSendRecv: return {"grouped"};
    case Collective::kAllToAll: return {"pairwise"};
  }
  return {};
}

namespace {

// --algo's entries, split at commas (an empty entry stays, so that the check names it).
std::vector<std::string_view> algoEntries(std::string_view algo) {
  std::vector<std::string_view> entries;
  for (size_t start = 0;;) {
    const size_t comma = algo.find(',', start);
    entries.push_back(algo.substr(start, comma - start));
    if (comma == std::string_view::npos) return entries;
    start = comma + 1;
  }
}

std::string checkAlgoEntry(Collective coll, std::string_view entry) {
  const std::vector<std::string_view> schedules = schedulesOf(coll);
  if (entry == "all" || entry == kOwnChoice) return "";
  std::string known;
  for (std::string_view name : schedules) {
    if (name == entry) return "";
    known += std::string(name) + ", ";
  }
  const std::string quoted = "'" + std::string(entry) + "'";
  if (schedules.size() == 1) {
    return "--algo: " + std::string(collectiveName(coll)) + " has one schedule, " + known + "not " +
           quoted + "; use " + std::string(schedules[0]) + ", all or auto";
  }
  return "--algo: unknown " + std::string(collectiveName(coll)) + " schedule " + quoted + "; use " +
         known + "all or auto";
}

}  // namespace

std::string checkAlgoOption(Collective coll, std::string_view algo) {
  for (std::string_view entry : algoEntries(algo)) {
    if (std::string error = checkAlgoEntry(coll, entry); !error.empty()) return error;
  }
  return "";
}

std::vector<std::optional<std::string>> tableAlgorithms(Collective coll, std::string_view algo) {
  if (algo.empty()) return {std::nullopt};
  std::vector<std::optional<std::string>> tables;
  for (std::string_view entry : algoEntries(algo)) {
    if (entry != "all") {
      tables.emplace_back(std::string(entry));
      continue;
    }
    for (std::string_view name : schedulesOf(coll)) tables.emplace_back(std::string(name));
  }
  return tables;
}

bool scheduleCanBeForced(Collective coll) { return schedulesOf(coll).size() > 1; }

}  // namespace hoop::perf
