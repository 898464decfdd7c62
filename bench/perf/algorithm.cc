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

std::string checkAlgoOption(Collective coll, std::string_view algo) {
  const std::vector<std::string_view> schedules = schedulesOf(coll);
  if (algo == "all") return "";
  std::string known;
  for (std::string_view name : schedules) {
    if (name == algo) return "";
    known += std::string(name) + ", ";
  }
  const std::string quoted = "'" + std::string(algo) + "'";
  if (schedules.size() == 1) {
    return "--algo: " + std::string(collectiveName(coll)) + " has one schedule, " + known + "not " +
           quoted + "; use " + std::string(schedules[0]) + " or all";
  }
  return "--algo: unknown " + std::string(collectiveName(coll)) + " schedule " + quoted + "; use " +
         known + "or all";
}

std::vector<std::optional<std::string>> tableAlgorithms(Collective coll, std::string_view algo) {
  if (algo.empty()) return {std::nullopt};
  if (algo != "all") return {std::string(algo)};
  std::vector<std::optional<std::string>> tables;
  for (std::string_view name : schedulesOf(coll)) tables.emplace_back(std::string(name));
  return tables;
}

bool algorithmNeedsEnvironment(Collective coll) { return schedulesOf(coll).size() > 1; }

std::optional<std::string> forcedAlgorithmFromEnv() {
  const char* text = std::getenv("HOOP_ALGO");
  if (text == nullptr || text[0] == '\0') return std::nullopt;
  return std::string(text);
}

}  // namespace hoop::perf
