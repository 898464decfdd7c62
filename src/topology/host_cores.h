// How many cores the ranks of one host can run on together: the union of their CPU affinity
// masks. A launcher that binds each rank to a core of its own (mpirun does by default for two
// ranks) leaves every rank a one-core mask, yet the ranks do not share a core; a cpuset that
// confines the whole job to one core gives every rank the same one-core mask, and they do.
// Only the union tells the two apart.
#pragma once

#include <cstddef>
#include <vector>

namespace hoop {

// Cores in the union of this process's affinity mask and those of `peerPids` (processes of
// the same host). A pid whose mask cannot be read (gone, or in another pid namespace) adds
// nothing. At least 1.
size_t coresOfLocalRanks(const std::vector<int>& peerPids);

}  // namespace hoop
