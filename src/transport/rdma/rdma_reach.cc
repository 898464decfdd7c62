#include "transport/rdma/rdma_reach.h"

#include "base/error.h"

namespace hoop {

std::string RdmaReach::describe() const {
  switch (state) {
    case RdmaState::kNotProbed: return "no RDMA summary (its devices were not probed)";
    case RdmaState::kNoLibrary: return "no libibverbs.so.1";
    case RdmaState::kNoDevice: return "no RDMA device";
    case RdmaState::kPortDown:
      return str("no active port on ", device.empty() ? "its RDMA devices" : device);
    case RdmaState::kNoGid: return str("no usable GID on ", device, ":", static_cast<int>(port));
    case RdmaState::kUsable:
      return str(device, ":", static_cast<int>(port), " (", gidTypeName(gidType), ")");
  }
  return "?";
}

void writeRdmaReach(WireWriter& out, const RdmaReach& reach) {
  out.u8(static_cast<uint8_t>(reach.state));
  out.u8(static_cast<uint8_t>(reach.linkLayer));
  out.u8(static_cast<uint8_t>(reach.gidType));
  out.u8(reach.port);
  out.u32(0);
  out.u64(reach.subnetPrefix);
  out.fixedString(reach.device, RdmaReach::kDeviceNameBytes);
}

RdmaReach readRdmaReach(WireReader& in) {
  RdmaReach reach;
  const uint8_t state = in.u8();
  const uint8_t layer = in.u8();
  const uint8_t type = in.u8();
  reach.port = in.u8();
  in.u32();
  reach.subnetPrefix = in.u64();
  reach.device = in.fixedString(RdmaReach::kDeviceNameBytes);
  if (state > static_cast<uint8_t>(RdmaState::kUsable) ||
      layer > static_cast<uint8_t>(LinkLayer::kEthernet) ||
      type > static_cast<uint8_t>(GidType::kRoceV2)) {
    fail(hoopRemoteError, "malformed RDMA summary (state ", static_cast<int>(state), ", layer ",
         static_cast<int>(layer), ", GID type ", static_cast<int>(type), ")");
  }
  reach.state = static_cast<RdmaState>(state);
  reach.linkLayer = static_cast<LinkLayer>(layer);
  reach.gidType = static_cast<GidType>(type);
  return reach;
}

std::string rdmaWhyNot(const RdmaReach& self, const RdmaReach& peer, bool sameHost, bool named,
                       const std::string& peerName) {
  if (sameHost && !named) {
    return "rdma joins ranks on different hosts (HOOP_TRANSPORT=rdma forces it within one)";
  }
  if (!self.usable()) return str("rdma: this rank has ", self.describe());
  if (!peer.usable()) return str("rdma: ", peerName, " has ", peer.describe());
  if (self.linkLayer != peer.linkLayer) {
    return str("rdma: no common link layer (", linkLayerName(self.linkLayer), " here, ",
               linkLayerName(peer.linkLayer), " at ", peerName, ")");
  }
  if (self.gidType != peer.gidType) {
    return str("rdma: no common GID type (", gidTypeName(self.gidType), " here, ",
               gidTypeName(peer.gidType), " at ", peerName, "; HOOP_IB_GID_INDEX picks another)");
  }
  if (self.linkLayer == LinkLayer::kInfiniBand && self.subnetPrefix != peer.subnetPrefix) {
    return str("rdma: different InfiniBand subnets (prefix ", std::hex, self.subnetPrefix,
               " here, ", peer.subnetPrefix, " at ", peerName, ")");
  }
  return "";
}

}  // namespace hoop
