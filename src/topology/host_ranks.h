// Decisions that depend only on which host each rank runs on (PeerInfo::hostId, gathered at
// bootstrap). Pure functions: the same inputs give the same answer on every rank, which is what
// lets ranks agree on a ring without talking.
#pragma once

#include <cstdint>
#include <vector>

namespace hoop {

// Ranks in ring order: each host's ranks contiguous and ascending, hosts in order of their lowest
// rank. The ring then crosses between hosts once per host (the fewest possible), e.g. host ids
// [b, a, b, a] give [0, 2, 1, 3].
std::vector<int> ringOrder(const std::vector<uint64_t>& hostIdByRank);

struct LocalRank {
  int rank = 0;  // position among the ranks of the same host, by global rank
  int size = 0;  // number of ranks on that host
};

// Rank `rank`'s place on its host. Throws hoopInvalidArgument when `rank` is out of range.
LocalRank localRankOf(const std::vector<uint64_t>& hostIdByRank, int rank);

}  // namespace hoop
