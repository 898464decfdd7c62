#include "transport/tcp/status_query.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/logging.h"

namespace hoop {
namespace {

constexpr size_t kLengthBytes = 4;

// One query's progress: connect, send the hello, read the length, read the payload.
struct Query {
  size_t target = 0;
  UniqueFd fd;
  bool connected = false;
  size_t sent = 0;
  std::vector<uint8_t> received;
  bool finished = false;
  bool answered = false;
};

uint32_t lengthOf(const std::vector<uint8_t>& bytes) {
  uint32_t length = 0;
  for (size_t i = 0; i < kLengthBytes; ++i) length |= static_cast<uint32_t>(bytes[i]) << (8 * i);
  return length;
}

// Starts a non-blocking connect; an invalid fd when the socket cannot even be made.
UniqueFd startConnect(const SocketAddress& address) {
  UniqueFd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  if (::connect(fd.get(), address.get(), address.length()) != 0 && errno != EINPROGRESS) {
    fd.reset();
  }
  return fd;
}

// Moves one query forward after poll said its socket is ready; true when it is over (answered
// or failed: `answer` tells which).
bool advance(Query& q, const StatusTarget& target, std::vector<uint8_t>& answer) {
  if (!q.connected) {
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(q.fd.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      return true;
    }
    q.connected = true;
  }
  while (q.sent < target.hello.size()) {
    ssize_t n = ::send(q.fd.get(), target.hello.data() + q.sent, target.hello.size() - q.sent,
                       MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) return errno != EAGAIN && errno != EINTR;
    q.sent += static_cast<size_t>(n);
  }
  while (true) {
    size_t want = kLengthBytes;
    if (q.received.size() >= kLengthBytes) {
      const uint32_t length = lengthOf(q.received);
      if (length > kMaxStatusAnswerBytes) {
        log(LogLevel::kWarn, LogSubsys::kNet, -1, "dropped a status answer from ",
            target.address.toString(), ": it claims ", length, " bytes (at most ",
            kMaxStatusAnswerBytes, ")");
        return true;
      }
      want = kLengthBytes + length;
    }
    if (q.received.size() == want) {
      answer.assign(q.received.begin() + kLengthBytes, q.received.end());
      q.answered = true;
      return true;
    }
    const size_t have = q.received.size();
    q.received.resize(want);
    ssize_t n = ::recv(q.fd.get(), q.received.data() + have, want - have, MSG_DONTWAIT);
    q.received.resize(have + (n > 0 ? static_cast<size_t>(n) : 0));
    if (n == 0) return true;  // closed before a whole answer: no answer
    if (n < 0) return errno != EAGAIN && errno != EINTR;
  }
}

}  // namespace

std::vector<uint8_t> frameStatusAnswer(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> framed(kLengthBytes + payload.size());
  const auto length = static_cast<uint32_t>(payload.size());
  for (size_t i = 0; i < kLengthBytes; ++i) framed[i] = static_cast<uint8_t>(length >> (8 * i));
  if (!payload.empty()) std::memcpy(framed.data() + kLengthBytes, payload.data(), payload.size());
  return framed;
}

std::vector<std::vector<uint8_t>> askForStatus(const std::vector<StatusTarget>& targets,
                                               Clock::time_point until,
                                               const std::function<bool()>& meanwhile,
                                               size_t maxInFlight, size_t* answered) {
  std::vector<std::vector<uint8_t>> answers(targets.size());
  std::vector<Query> inFlight;
  size_t next = 0;
  std::vector<pollfd> fds;
  while (next < targets.size() || !inFlight.empty()) {
    while (next < targets.size() && inFlight.size() < std::max<size_t>(maxInFlight, 1)) {
      Query q;
      q.target = next;
      q.fd = startConnect(targets[next++].address);
      if (q.fd.valid()) inFlight.push_back(std::move(q));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (left <= 0) break;
    fds.clear();
    for (const Query& q : inFlight) {
      const bool writing = !q.connected || q.sent < targets[q.target].hello.size();
      fds.push_back({q.fd.get(), static_cast<short>(writing ? POLLOUT : POLLIN), 0});
    }
    // Short slices: `meanwhile` must run often enough to answer the peers asking this rank.
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::min<long long>(left, 20))) < 0 &&
        errno != EINTR) {
      fail(hoopSystemError, "poll: ", errnoText(errno));
    }
    for (size_t i = 0; i < inFlight.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Query& q = inFlight[i];
      q.finished = advance(q, targets[q.target], answers[q.target]);
      if (q.answered && answered != nullptr) ++*answered;
    }
    std::erase_if(inFlight, [](const Query& q) { return q.finished; });
    if (meanwhile && !meanwhile()) break;
  }
  return answers;
}

}  // namespace hoop
