#include "topology/host_ranks.h"

#include <unordered_map>

#include "base/error.h"

namespace hoop {

std::vector<int> ringOrder(const std::vector<uint64_t>& hostIdByRank) {
  // Hosts get a slot the first time one of their ranks appears, so host order is by lowest rank
  // and ranks within a host stay ascending.
  std::unordered_map<uint64_t, size_t> slotOfHost;
  std::vector<std::vector<int>> ranksBySlot;
  for (size_t rank = 0; rank < hostIdByRank.size(); ++rank) {
    auto [slot, added] = slotOfHost.try_emplace(hostIdByRank[rank], ranksBySlot.size());
    if (added) ranksBySlot.emplace_back();
    ranksBySlot[slot->second].push_back(static_cast<int>(rank));
  }
  std::vector<int> order;
  order.reserve(hostIdByRank.size());
  for (const auto& ranks : ranksBySlot) order.insert(order.end(), ranks.begin(), ranks.end());
  return order;
}

LocalRank localRankOf(const std::vector<uint64_t>& hostIdByRank, int rank) {
  if (rank < 0 || static_cast<size_t>(rank) >= hostIdByRank.size()) {
    fail(hoopInvalidArgument, "rank ", rank, " is out of range for ", hostIdByRank.size(),
         " ranks");
  }
  LocalRank local;
  for (size_t other = 0; other < hostIdByRank.size(); ++other) {
    if (hostIdByRank[other] != hostIdByRank[static_cast<size_t>(rank)]) continue;
    if (static_cast<int>(other) < rank) ++local.rank;
    ++local.size;
  }
  return local;
}

}  // namespace hoop
