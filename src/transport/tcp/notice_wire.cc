#include "transport/tcp/notice_wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "transport/tcp/status_query.h"

namespace hoop {
namespace {

constexpr size_t kLengthBytes = 4;

}  // namespace

std::vector<uint8_t> frameNotice(const std::vector<uint8_t>& payload) {
  return frameStatusAnswer(payload);
}

std::optional<std::vector<uint8_t>> readFramedMessage(int fd, size_t maxBytes,
                                                      std::chrono::milliseconds within) {
  const auto until = Clock::now() + within;
  std::vector<uint8_t> received;
  size_t want = kLengthBytes;
  while (true) {
    if (received.size() == want) {
      if (want > kLengthBytes) break;
      uint32_t length = 0;
      for (size_t i = 0; i < kLengthBytes; ++i) {
        length |= static_cast<uint32_t>(received[i]) << (8 * i);
      }
      if (length > maxBytes) return std::nullopt;
      if (length == 0) break;
      want = kLengthBytes + length;
      continue;
    }
    const size_t have = received.size();
    received.resize(want);
    const ssize_t n = ::recv(fd, received.data() + have, want - have, MSG_DONTWAIT);
    received.resize(have + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n == 0) return std::nullopt;  // closed before the whole message
    if (n > 0) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return std::nullopt;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd ready{fd, POLLIN, 0};
    ::poll(&ready, 1, static_cast<int>(left));
  }
  return std::vector<uint8_t>(received.begin() + kLengthBytes, received.end());
}

}  // namespace hoop
