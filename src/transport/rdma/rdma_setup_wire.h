// What two ranks trade over the pair's TCP link to connect their queue pairs: for each side its
// rails (a device port: its GID, LID, MTU, and the memory block the peer writes into with its
// keys), its queue pairs (number, starting PSN, rail) and the shape of its inbound slot ring.
// Pure functions over bytes, kept apart from verbs so the parser can be fuzzed on its own.
//
// The link the message rides was opened with the job's secret (tcp/hello.h), so its bytes come
// from the peer; the message repeats the job tag and both ranks, and each side checks them
// before it trusts a key or an address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/rdma/gid_table.h"

namespace hoop {

inline constexpr size_t kRdmaMaxRails = 4;
inline constexpr size_t kRdmaMaxQueuePairs = 16;
inline constexpr size_t kRdmaMaxSlots = 1024;
inline constexpr size_t kRdmaMaxSlotBytes = size_t{1} << 30;
inline constexpr uint32_t kRdmaMaxSetupMessage = 16 << 10;

struct RdmaRailInfo {
  Gid gid{};
  uint16_t lid = 0;
  uint8_t port = 0;
  uint8_t mtu = 0;  // enum ibv_mtu: 1 (256 B) .. 5 (4096 B)
  LinkLayer linkLayer = LinkLayer::kUnknown;
  uint8_t gidIndex = 0;  // informational: the peer's own index
  // The side's connection memory (rdma_layout.h) as registered on this rail.
  uint64_t memoryAddress = 0;
  uint32_t memoryKey = 0;  // rkey
};

struct RdmaQueuePairInfo {
  uint8_t rail = 0;
  uint32_t number = 0;  // 24 bits
  uint32_t psn = 0;     // 24 bits
};

struct RdmaSetupMessage {
  bool ok = true;
  std::string error;  // !ok: why this side cannot go on
  uint64_t jobTag = 0;
  uint32_t fromRank = 0;
  uint32_t toRank = 0;
  // The sender's inbound ring: what the peer writes into.
  uint32_t slots = 0;
  uint64_t slotBytes = 0;
  std::vector<RdmaRailInfo> rails;
  std::vector<RdmaQueuePairInfo> queuePairs;
};

std::vector<uint8_t> encodeRdmaSetup(const RdmaSetupMessage& message);
// Throws hoopRemoteError for anything that is not a well-formed setup message of this version:
// a wrong magic or version, counts or sizes out of range, a queue pair on a rail that does not
// exist, numbers wider than 24 bits, an MTU that is not one.
RdmaSetupMessage decodeRdmaSetup(const uint8_t* data, size_t bytes);

}  // namespace hoop
