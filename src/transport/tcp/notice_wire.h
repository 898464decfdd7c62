// The failure notice's transport half (the payload is core/failure_notice.h). A notice travels on
// a short-lived connection to a rank's listener: a hello with purpose kFailureNotice followed at
// once by the framed payload (status_query.h's framing); the receiver answers with an empty frame
// once it has taken it, so the sender knows it arrived before it goes on to exit.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "transport/tcp/socket.h"

namespace hoop {

// The largest notice payload accepted; anything longer is a stranger's garbage.
inline constexpr size_t kMaxNoticeBytes = 2048;

// What a notice connection carries after its hello.
std::vector<uint8_t> frameNotice(const std::vector<uint8_t>& payload);

// Reads one framed message of at most `maxBytes` from the non-blocking socket `fd`, waiting at
// most `within` for it (the sender writes it together with its hello, so it is normally there
// already); nullopt when it is too long, cut short or late.
std::optional<std::vector<uint8_t>> readFramedMessage(int fd, size_t maxBytes,
                                                      std::chrono::milliseconds within);

}  // namespace hoop
