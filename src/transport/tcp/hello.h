// The first message on every connection to a rank's listener: who is calling whom, why, with the
// job's secret.
// Pure functions over bytes, kept apart from the sockets so the parser can be fuzzed on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/secret.h"

namespace hoop {

// Why a connection was opened: a data stream, a one-shot question about what the rank is doing
// (the hang report's status query; see core/hang_report.h), or a one-shot failure notice (see
// core/failure_notice.h).
enum class HelloPurpose : uint16_t { kData = 0, kStatusQuery = 1, kFailureNotice = 2 };

struct TcpHello {
  HelloPurpose purpose = HelloPurpose::kData;
  uint16_t streams = 0;
  uint16_t streamIndex = 0;
  Secret secret;
  uint64_t jobTag = 0;
  uint32_t fromRank = 0;
  uint32_t toRank = 0;
};

std::vector<uint8_t> encodeTcpHello(const TcpHello& hello);
// Throws (hoopRemoteError) for anything that is not a hello of this wire version, or names a
// purpose this version does not know.
TcpHello decodeTcpHello(const std::vector<uint8_t>& bytes);
size_t tcpHelloBytes();

// Why this rank (`selfRank` of `nranks`, holding the job's `secret` and `jobTag`) refuses a
// hello: not the job's secret, meant for another rank, or from no other rank of the job. Empty
// when none of these holds; each kind of hello adds its own rules.
std::string helloRefusal(const TcpHello& hello, const Secret& secret, uint64_t jobTag, int selfRank,
                         size_t nranks);

}  // namespace hoop
