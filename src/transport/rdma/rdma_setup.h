// Building an RdmaConnection: each side opens its rails (device ports from discovery), registers
// its block (rdma_layout.h) there, creates its queue pairs, and tells the peer over the pair's
// TCP link (rdma_setup_wire.h); then both bring their queue pairs to ready-to-send, post their
// receives, and confirm to each other that they did before either writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "transport/connection.h"
#include "transport/memory_registry.h"
#include "transport/rdma/rdma_options.h"
#include "transport/setup_channel.h"

namespace hoop {

struct RdmaConnectRequest {
  int selfRank = -1;
  int peerRank = -1;
  std::string peer;  // "rank 3 (host b, pid 912)"
  uint64_t jobTag = 0;
  RdmaOptions options;
  MemoryRegistry* registry = nullptr;
  // The pair's TCP link, which the setup rides; taken by the connection once it is built, to
  // notice the peer's exit (may be null).
  std::unique_ptr<Connection>* link = nullptr;
};

// Both ranks call it with each other's rank. On failure both sides throw: the side that failed
// sends its reason first, so the other does not wait on the channel. Throws hoopSystemError in
// a build without verbs.
std::unique_ptr<Connection> connectRdma(const RdmaConnectRequest& request, SetupChannel& channel);

}  // namespace hoop
