// The rendezvous wire formats: what a rank sends the root and what the root answers. Pure
// functions over bytes, kept apart from the sockets so the parsers can be fuzzed on their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/function_ref.h"
#include "base/wire.h"
#include "core/bootstrap.h"

namespace hoop {

inline constexpr uint32_t kBootstrapIdMagic = 0x50494f48;  // "HOIP"
inline constexpr uint32_t kRegisterMagic = 0x42504f48;     // "HOPB"
inline constexpr uint16_t kBootstrapWireVersion = 4;
inline constexpr size_t kMaxRendezvousErrorText = 4096;

void writeAddress(WireWriter& out, const SocketAddress& address);
SocketAddress readAddress(WireReader& in);

// Registration, client to root. Fixed size, so the root reads exactly this many bytes.
struct Registration {
  Secret secret;
  uint64_t jobTag = 0;
  uint32_t nranks = 0;
  PeerInfo info;
};

std::vector<uint8_t> encodeRegistration(const Registration& r);
// Throws (hoopRemoteError) for anything that is not a registration of this wire version.
Registration decodeRegistration(const std::vector<uint8_t>& bytes);
size_t registrationBytes();

// The root's answers: the table of every rank's details, or an error text.
std::vector<uint8_t> encodeRendezvousTable(const std::vector<PeerInfo>& peers);
std::vector<uint8_t> encodeRendezvousError(const std::string& message);

// Reads the root's answer through `readExactly` (which fills the whole buffer or throws) and
// returns the table, indexed by rank. An error answer throws hoopInvalidUsage with the root's
// text; anything malformed throws hoopRemoteError. `rootName` names the root in messages.
std::vector<PeerInfo> readRendezvousAnswer(FunctionRef<void(void*, size_t)> readExactly, int nranks,
                                           int rank, const std::string& rootName);

}  // namespace hoop
