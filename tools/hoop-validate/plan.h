// Which ranks measure their link together, round by round. Within each host every pair of its
// ranks, hosts in parallel; across hosts, rounds of perfect matchings of the hosts (each host
// paired with one other, all pairs of a round at once), the ranks of one local index paired with
// each other (rail i with rail i). The matchings are the rounds of a round-robin tournament over
// a seeded shuffle of the hosts: R rounds are R random perfect matchings that never repeat a pair,
// and all rounds together (--full) are every pair of hosts exactly once, in O(N) steps.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hoop::validate {

// Where each rank runs, from the rendezvous: hosts numbered in order of their first rank.
struct Layout {
  std::vector<int> hostOf;                  // by rank
  std::vector<int> localIndexOf;            // by rank: its place among its host's ranks
  std::vector<std::vector<int>> hostRanks;  // by host: its ranks in rank order
  std::vector<std::string> hostNames;       // by host

  int ranks() const { return static_cast<int>(hostOf.size()); }
  int hosts() const { return static_cast<int>(hostRanks.size()); }
};

// Builds the layout from each rank's host name.
Layout layoutFromHostNames(const std::vector<std::string>& hostNameOfRank);

enum class Phase { kIntraHost, kCrossHost };
const char* phaseName(Phase phase);

struct Round {
  Phase phase = Phase::kIntraHost;
  int index = 0;
  std::vector<int> peerOf;  // by rank: its partner this round, -1 for none

  // The pairs (lower rank first).
  std::vector<std::pair<int, int>> pairs() const;
};

// Round-robin rounds over `n` members (a bye added where n is odd): round r pairs member
// order[0] with order[r+1]... by the circle method. Every pair of members meets in exactly one
// of the n-1 (n even) or n (n odd) rounds.
std::vector<std::vector<std::pair<int, int>>> roundRobin(const std::vector<int>& order);

// Every pair of ranks within each host, hosts at once: as many rounds as the busiest host needs.
std::vector<Round> intraHostRounds(const Layout& layout);

// `rounds` matchings of the hosts (all of them when `full` or when that many cover every pair),
// shuffled by `seed`; in each, local index i on one host measures with local index i on the
// other, where both hosts have it.
std::vector<Round> crossHostRounds(const Layout& layout, int rounds, bool full, uint64_t seed);

// Rounds in which each of `pairs` is measured once, no rank in two pairs of a round (greedy, in
// the given order); pairs within a host and across hosts in rounds of their own phase.
std::vector<Round> roundsForPairs(const Layout& layout,
                                  const std::vector<std::pair<int, int>>& pairs);

}  // namespace hoop::validate
