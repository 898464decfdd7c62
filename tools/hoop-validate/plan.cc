// The measuring plan: tournaments within hosts and across them (plan.h).
#include "plan.h"

#include <algorithm>
#include <map>
#include <random>

namespace hoop::validate {

Layout layoutFromHostNames(const std::vector<std::string>& hostNameOfRank) {
  Layout layout;
  std::map<std::string, int> hostIndex;
  for (size_t rank = 0; rank < hostNameOfRank.size(); ++rank) {
    const std::string& name = hostNameOfRank[rank];
    auto [it, added] = hostIndex.emplace(name, static_cast<int>(layout.hostRanks.size()));
    if (added) {
      layout.hostRanks.emplace_back();
      layout.hostNames.push_back(name);
    }
    std::vector<int>& ranks = layout.hostRanks[static_cast<size_t>(it->second)];
    layout.hostOf.push_back(it->second);
    layout.localIndexOf.push_back(static_cast<int>(ranks.size()));
    ranks.push_back(static_cast<int>(rank));
  }
  return layout;
}

const char* phaseName(Phase phase) {
  return phase == Phase::kIntraHost ? "intra-host" : "cross-host";
}

std::vector<std::pair<int, int>> Round::pairs() const {
  std::vector<std::pair<int, int>> result;
  for (size_t rank = 0; rank < peerOf.size(); ++rank) {
    if (peerOf[rank] > static_cast<int>(rank))
      result.emplace_back(static_cast<int>(rank), peerOf[rank]);
  }
  return result;
}

std::vector<std::vector<std::pair<int, int>>> roundRobin(const std::vector<int>& order) {
  std::vector<int> members = order;
  if (members.size() % 2 == 1) members.push_back(-1);  // the bye
  const size_t n = members.size();
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // The circle method: members[0] stays, the others rotate one place per round.
  for (size_t r = 0; r + 1 < n; ++r) {
    std::vector<std::pair<int, int>> round;
    for (size_t i = 0; i < n / 2; ++i) {
      const int a = members[i];
      const int b = members[n - 1 - i];
      if (a >= 0 && b >= 0) round.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(std::move(round));
    std::rotate(members.begin() + 1, members.end() - 1, members.end());
  }
  return rounds;
}

std::vector<Round> intraHostRounds(const Layout& layout) {
  std::vector<std::vector<std::vector<std::pair<int, int>>>> perHost;
  size_t most = 0;
  for (const std::vector<int>& ranks : layout.hostRanks) {
    perHost.push_back(roundRobin(ranks));
    most = std::max(most, perHost.back().size());
  }
  std::vector<Round> rounds;
  for (size_t r = 0; r < most; ++r) {
    Round round{Phase::kIntraHost, static_cast<int>(r),
                std::vector<int>(static_cast<size_t>(layout.ranks()), -1)};
    for (const auto& hostRounds : perHost) {
      if (r >= hostRounds.size()) continue;
      for (auto [a, b] : hostRounds[r]) {
        round.peerOf[static_cast<size_t>(a)] = b;
        round.peerOf[static_cast<size_t>(b)] = a;
      }
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<Round> crossHostRounds(const Layout& layout, int rounds, bool full, uint64_t seed) {
  std::vector<int> hosts(static_cast<size_t>(layout.hosts()));
  for (size_t h = 0; h < hosts.size(); ++h) hosts[h] = static_cast<int>(h);
  // A generator whose sequence the standard fixes, and a shuffle written out here: every rank
  // draws the same matchings from the same seed, whatever its standard library.
  std::mt19937_64 random(seed);
  for (size_t i = hosts.size(); i > 1; --i) std::swap(hosts[i - 1], hosts[random() % i]);
  const auto matchings = roundRobin(hosts);
  const size_t take =
      full ? matchings.size() : std::min(matchings.size(), static_cast<size_t>(rounds));
  std::vector<Round> result;
  for (size_t r = 0; r < take; ++r) {
    Round round{Phase::kCrossHost, static_cast<int>(r),
                std::vector<int>(static_cast<size_t>(layout.ranks()), -1)};
    for (auto [hostA, hostB] : matchings[r]) {
      const auto& ranksA = layout.hostRanks[static_cast<size_t>(hostA)];
      const auto& ranksB = layout.hostRanks[static_cast<size_t>(hostB)];
      for (size_t i = 0; i < std::min(ranksA.size(), ranksB.size()); ++i) {
        round.peerOf[static_cast<size_t>(ranksA[i])] = ranksB[i];
        round.peerOf[static_cast<size_t>(ranksB[i])] = ranksA[i];
      }
    }
    result.push_back(std::move(round));
  }
  return result;
}

std::vector<Round> roundsForPairs(const Layout& layout,
                                  const std::vector<std::pair<int, int>>& pairs) {
  std::vector<Round> rounds;
  for (Phase phase : {Phase::kIntraHost, Phase::kCrossHost}) {
    const size_t first = rounds.size();
    for (auto [a, b] : pairs) {
      const bool sameHost =
          layout.hostOf[static_cast<size_t>(a)] == layout.hostOf[static_cast<size_t>(b)];
      if (sameHost != (phase == Phase::kIntraHost)) continue;
      size_t r = first;
      while (r < rounds.size() && (rounds[r].peerOf[static_cast<size_t>(a)] >= 0 ||
                                   rounds[r].peerOf[static_cast<size_t>(b)] >= 0)) {
        ++r;
      }
      if (r == rounds.size()) {
        rounds.push_back(Round{phase, static_cast<int>(r - first),
                               std::vector<int>(static_cast<size_t>(layout.ranks()), -1)});
      }
      rounds[r].peerOf[static_cast<size_t>(a)] = b;
      rounds[r].peerOf[static_cast<size_t>(b)] = a;
    }
  }
  return rounds;
}

}  // namespace hoop::validate
