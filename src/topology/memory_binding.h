// Placing memory on a NUMA node: the slots a rank receives into go on the node of the core (or,
// later, the GPU or NIC) that reads them, so every ring step reads local memory.
#pragma once

#include <cstddef>
#include <string>

namespace hoop {

// Asks the kernel to take the pages of [address, address + bytes) from NUMA node `node` when
// they are first touched (MPOL_PREFERRED: another node when that one is full, rather than
// failing). The range is widened to whole pages. For a MAP_SHARED mapping the policy belongs to
// the shared object, so it holds whichever process touches a page first. Returns "" on success,
// else why it could not (the caller logs it: placement is a speed-up, never a reason to fail).
std::string preferNumaNode(void* address, size_t bytes, int node);

// The NUMA node whose memory backs the page holding `address`, or -1 when the kernel will not
// say (the page is not yet allocated, or no NUMA support). For tests and diagnostics.
int numaNodeOfPage(const void* address);

// How many NUMA nodes this machine has online (from /sys; 1 when it cannot tell).
size_t onlineNumaNodes();

}  // namespace hoop
