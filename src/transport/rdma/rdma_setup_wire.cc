#include "transport/rdma/rdma_setup_wire.h"

#include <algorithm>

#include "base/error.h"
#include "base/wire.h"

namespace hoop {
namespace {

constexpr uint32_t kSetupMagic = 0x4d445248;  // "HRDM"
constexpr uint8_t kSetupVersion = 1;
constexpr size_t kMaxErrorText = 4096;

[[noreturn]] void malformed(const std::string& why) {
  fail(hoopRemoteError, "malformed rdma setup message: ", why);
}

}  // namespace

std::vector<uint8_t> encodeRdmaSetup(const RdmaSetupMessage& m) {
  WireWriter out;
  out.u32(kSetupMagic);
  out.u8(kSetupVersion);
  out.u8(m.ok ? 1 : 0);
  const size_t errorBytes = std::min(m.error.size(), kMaxErrorText);
  out.u16(static_cast<uint16_t>(errorBytes));
  out.raw(m.error.data(), errorBytes);
  out.u64(m.jobTag);
  out.u32(m.fromRank);
  out.u32(m.toRank);
  out.u32(m.slots);
  out.u64(m.slotBytes);
  out.u8(static_cast<uint8_t>(m.rails.size()));
  out.u8(static_cast<uint8_t>(m.queuePairs.size()));
  for (const RdmaRailInfo& rail : m.rails) {
    out.raw(rail.gid.data(), rail.gid.size());
    out.u16(rail.lid);
    out.u8(rail.port);
    out.u8(rail.mtu);
    out.u8(static_cast<uint8_t>(rail.linkLayer));
    out.u8(rail.gidIndex);
    out.u64(rail.memoryAddress);
    out.u32(rail.memoryKey);
  }
  for (const RdmaQueuePairInfo& qp : m.queuePairs) {
    out.u8(qp.rail);
    out.u32(qp.number);
    out.u32(qp.psn);
  }
  return out.bytes();
}

RdmaSetupMessage decodeRdmaSetup(const uint8_t* data, size_t bytes) {
  WireReader in(data, bytes, "rdma setup message");
  if (in.u32() != kSetupMagic) malformed("not an rdma setup message");
  if (const uint8_t version = in.u8(); version != kSetupVersion) {
    fail(hoopRemoteError, "rdma setup message of version ", static_cast<int>(version),
         ", this hoop speaks ", static_cast<int>(kSetupVersion));
  }
  RdmaSetupMessage m;
  const uint8_t ok = in.u8();
  if (ok > 1) malformed(str("status byte ", static_cast<int>(ok)));
  m.ok = ok == 1;
  const uint16_t errorBytes = in.u16();
  if (errorBytes > kMaxErrorText || errorBytes > in.remaining()) malformed("error text too long");
  m.error.resize(errorBytes);
  in.raw(m.error.data(), errorBytes);
  m.jobTag = in.u64();
  m.fromRank = in.u32();
  m.toRank = in.u32();
  m.slots = in.u32();
  m.slotBytes = in.u64();
  const uint8_t rails = in.u8();
  const uint8_t queuePairs = in.u8();
  if (!m.ok) return m;  // a failure carries its text; the rest means nothing
  if (m.slots < 1 || m.slots > kRdmaMaxSlots) malformed(str(m.slots, " slots"));
  if (m.slotBytes < 64 || m.slotBytes > kRdmaMaxSlotBytes || m.slotBytes % 64 != 0) {
    malformed(str("slots of ", m.slotBytes, " bytes"));
  }
  if (rails < 1 || rails > kRdmaMaxRails) malformed(str(static_cast<int>(rails), " rails"));
  if (queuePairs < 1 || queuePairs > kRdmaMaxQueuePairs) {
    malformed(str(static_cast<int>(queuePairs), " queue pairs"));
  }
  for (uint8_t r = 0; r < rails; ++r) {
    RdmaRailInfo rail;
    in.raw(rail.gid.data(), rail.gid.size());
    rail.lid = in.u16();
    rail.port = in.u8();
    rail.mtu = in.u8();
    const uint8_t layer = in.u8();
    rail.gidIndex = in.u8();
    rail.memoryAddress = in.u64();
    rail.memoryKey = in.u32();
    if (rail.port < 1) malformed("port 0");
    if (rail.mtu < 1 || rail.mtu > 5) malformed(str("MTU code ", static_cast<int>(rail.mtu)));
    if (layer != static_cast<uint8_t>(LinkLayer::kInfiniBand) &&
        layer != static_cast<uint8_t>(LinkLayer::kEthernet)) {
      malformed(str("link layer ", static_cast<int>(layer)));
    }
    rail.linkLayer = static_cast<LinkLayer>(layer);
    if (rail.memoryAddress == 0) malformed("memory at address 0");
    m.rails.push_back(rail);
  }
  for (uint8_t q = 0; q < queuePairs; ++q) {
    RdmaQueuePairInfo qp;
    qp.rail = in.u8();
    qp.number = in.u32();
    qp.psn = in.u32();
    if (qp.rail >= rails) malformed(str("queue pair on rail ", static_cast<int>(qp.rail)));
    if (qp.number >= (1u << 24) || qp.psn >= (1u << 24)) malformed("a number wider than 24 bits");
    m.queuePairs.push_back(qp);
  }
  if (in.remaining() != 0) malformed(str(in.remaining(), " trailing bytes"));
  return m;
}

}  // namespace hoop
