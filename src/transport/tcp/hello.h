// The first message on every TCP data connection: who is calling whom, with the job's secret.
// Pure functions over bytes, kept apart from the sockets so the parser can be fuzzed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/secret.h"

namespace hoop {

struct TcpHello {
  uint16_t streams = 0;
  uint16_t streamIndex = 0;
  Secret secret;
  uint64_t jobTag = 0;
  uint32_t fromRank = 0;
  uint32_t toRank = 0;
};

std::vector<uint8_t> encodeTcpHello(const TcpHello& hello);
// Throws (hoopRemoteError) for anything that is not a hello of this wire version.
TcpHello decodeTcpHello(const std::vector<uint8_t>& bytes);
size_t tcpHelloBytes();

}  // namespace hoop
