// Knobs of the RDMA transport. The communicator fills them from its config (HOOP_IB_*,
// docs/configuration.md); the defaults suit a ring allreduce between hosts.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "transport/rdma/hca_filter.h"

namespace hoop {

struct RdmaOptions {
  HcaFilter hca;                // HOOP_IB_HCA: which devices and ports
  std::optional<int> gidIndex;  // HOOP_IB_GID_INDEX; unset: RoCE v2 found in the GID table
  size_t queuePairs = 1;        // HOOP_IB_QPS_PER_CONNECTION, 1..16
  // HOOP_IB_TIMEOUT: the local ACK timeout, 4.096 us x 2^timeout (18: about 1 s), and
  // HOOP_IB_RETRY_CNT retries of it: a dead peer or a cut link shows after about their product.
  int timeout = 18;
  int retryCount = 7;
  // HOOP_IB_SLOTS, HOOP_IB_SLOT_SIZE: the inbound ring per connection. A message of at most one
  // slot travels whole (and is read in place); larger ones stream through the slots, or go
  // straight between registered buffers (hoopCommRegister).
  // Four slots of a 512 KiB piece keep 2 MiB in flight per direction, many times what a fast
  // fabric holds in transit, while each connection pins 4 MiB (inbound ring and staging): a rank
  // with many peers across hosts pins that for each.
  size_t slots = 4;
  size_t slotBytes = 512 << 10;
  // How long a connection with work pending may see nothing move before it tests the path to
  // the peer with a small write (a dead peer then fails it within timeout x retries).
  std::chrono::milliseconds probeInterval{500};
  // Where the devices are listed; tests point it at a fake tree.
  std::string sysfsRoot = "/sys/class/infiniband";
};

}  // namespace hoop
