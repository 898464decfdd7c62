// What a rank tells every other rank about its RDMA at the rendezvous: whether it has a usable
// device and on which fabric. Both ranks of a pair hold both summaries (the rendezvous table is
// the same everywhere), so both decide alike whether RDMA carries their data, without asking
// each other (Transport::whyNot).
#pragma once

#include <cstdint>
#include <string>

#include "base/wire.h"
#include "transport/rdma/gid_table.h"

namespace hoop {

enum class RdmaState : uint8_t {
  kNotProbed = 0,  // HOOP_TRANSPORT excludes rdma: nothing was looked at
  kNoLibrary = 1,  // libibverbs.so.1 could not be loaded
  kNoDevice = 2,   // no device (or none HOOP_IB_HCA allows)
  kPortDown = 3,   // devices, but no port active
  kNoGid = 4,      // an active port without a GID to use
  kUsable = 5,
};

struct RdmaReach {
  RdmaState state = RdmaState::kNotProbed;
  LinkLayer linkLayer = LinkLayer::kUnknown;
  GidType gidType = GidType::kUnknown;
  uint8_t port = 0;
  // InfiniBand: the subnet prefix (the GID's first 8 bytes); ports on different subnets reach
  // each other only through a router. 0 on RoCE, which IP routes.
  uint64_t subnetPrefix = 0;
  std::string device;  // "mlx5_0" (cut to kDeviceNameBytes), for messages

  static constexpr size_t kDeviceNameBytes = 16;
  bool usable() const { return state == RdmaState::kUsable; }
  // "mlx5_0:1 (RoCE v2)", "no RDMA device", "port down on rxe0": for messages.
  std::string describe() const;
};

// A fixed 32 bytes on the wire (the rendezvous registration is of fixed size).
void writeRdmaReach(WireWriter& out, const RdmaReach& reach);
// Throws hoopRemoteError for a state or type this version does not know.
RdmaReach readRdmaReach(WireReader& in);

// Why RDMA cannot carry the data between a rank with `self` and a peer with `peer` (named
// `peerName`), or empty when it can. Ranks on one host use it only when `named` (the user named
// rdma in HOOP_TRANSPORT): within a host shared memory is faster.
std::string rdmaWhyNot(const RdmaReach& self, const RdmaReach& peer, bool sameHost, bool named,
                       const std::string& peerName);

}  // namespace hoop
