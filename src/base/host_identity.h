// Which host this process runs on, as a number every rank of the job computes alike: ranks with
// equal ids share a host (and so may share memory).
#pragma once

#include <cstdint>

namespace hoop {

// hostname + boot id (HOOP_HOSTNAME replaces both, to simulate hosts in tests): a rebooted or
// cloned machine with the same name is another host.
uint64_t localHostId();

}  // namespace hoop
