// The hang report's transport half: asking ranks what they are doing over short-lived
// connections to their listeners. A query is a hello with purpose kStatusQuery; the answer is
// one length-prefixed message whose payload the core encodes (core/status_wire.h). Everything is
// non-blocking and bounded by a deadline, so a stopped or unreachable rank costs its slot in the
// wait, nothing more.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "transport/tcp/socket.h"

namespace hoop {

// The largest status payload accepted; anything longer is a stranger's garbage.
inline constexpr size_t kMaxStatusAnswerBytes = 4096;

// Prefixes `payload` with its length (u32, little-endian) for the wire.
std::vector<uint8_t> frameStatusAnswer(const std::vector<uint8_t>& payload);

struct StatusTarget {
  SocketAddress address;
  std::vector<uint8_t> hello;  // the encoded query hello for this target
};

// Connects to every target (at most `maxInFlight` at once), sends its hello and reads one framed
// answer. Returns the payloads by target position, empty where no valid answer came by
// `until`. `meanwhile` runs between polls (the caller answers queries sent to itself there);
// when it returns false the gathering stops with what it has. `answered`, when given, counts the
// whole answers (empty ones included: a failure notice's receipt is one).
std::vector<std::vector<uint8_t>> askForStatus(const std::vector<StatusTarget>& targets,
                                               Clock::time_point until,
                                               const std::function<bool()>& meanwhile,
                                               size_t maxInFlight = 64, size_t* answered = nullptr);

}  // namespace hoop
