// A ring of ranks as a schedule sees it: the ranks in ring order and this rank's place in it.
// The world ring spans the communicator; hierarchical schedules also use the ring of the ranks
// on this host and the ring of the ranks with this rank's local index on every host.
#pragma once

#include <cstddef>
#include <vector>

namespace hoop {

struct Ring {
  std::vector<int> ranks;  // ring order
  size_t position = 0;     // index of this rank in `ranks`

  size_t size() const { return ranks.size(); }
  int at(size_t pos) const { return ranks[pos % ranks.size()]; }
  int next() const { return at(position + 1); }
  int prev() const { return at(position + ranks.size() - 1); }
  // The chunk index `stepsBack` places behind this rank's position.
  size_t behind(size_t stepsBack) const {
    return (position + ranks.size() - stepsBack % ranks.size()) % ranks.size();
  }
};

}  // namespace hoop
