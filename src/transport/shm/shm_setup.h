// Building a ShmConnection: the lower rank creates the segment (both directions in one), tells
// the peer its name; the peer maps it and answers; the creator unlinks the name at once, so from
// then on a crash of either process leaves nothing in /dev/shm. The same exchange probes whether
// each side may read the other's memory with process_vm_readv (CMA) and learns the peer's pid.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transport/setup_channel.h"
#include "transport/shm/shm_connection.h"
#include "transport/shm/shm_options.h"

namespace hoop {

// Both ranks call it with each other's rank; `peerDescription` names the peer in errors
// ("rank 3 (host:pid)"). On failure both sides throw: the side that failed sends its reason
// first, so the other does not wait on the channel.
std::unique_ptr<ShmConnection> connectShm(int selfRank, int peerRank, std::string peerDescription,
                                          SetupChannel& channel, const ShmOptions& options);

}  // namespace hoop
