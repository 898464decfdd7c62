#include "transport/tcp/handshake_acceptor.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/logging.h"

namespace hoop {

std::vector<HandshakeAcceptor::Arrival> HandshakeAcceptor::poll(std::chrono::milliseconds timeout,
                                                                int wakeFd, bool* woken) {
  std::vector<pollfd> fds = {{listenFd_, POLLIN, 0}, {wakeFd, POLLIN, 0}};
  for (auto& p : pending_) fds.push_back({p.fd.get(), POLLIN, 0});
  int ready =
      ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, timeout.count())));
  if (ready < 0 && errno != EINTR) fail(hoopSystemError, "poll: ", errnoText(errno));
  if (woken != nullptr) *woken = wakeFd >= 0 && fds[1].revents != 0;

  std::vector<Arrival> complete;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (fds[i + 2].revents == 0) continue;
    Pending& p = pending_[i];
    size_t have = p.buffer.size();
    p.buffer.resize(helloBytes_);
    ssize_t got = ::recv(p.fd.get(), p.buffer.data() + have, helloBytes_ - have, MSG_DONTWAIT);
    p.buffer.resize(have + (got > 0 ? static_cast<size_t>(got) : 0));
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
      log(LogLevel::kWarn, LogSubsys::kNet, -1, "dropped a connection from ", p.from,
          ": it closed before sending a complete hello");
      p.fd.reset();
    } else if (p.buffer.size() == helloBytes_) {
      complete.push_back({std::move(p.fd), std::move(p.buffer), std::move(p.from)});
    }
  }
  std::erase_if(pending_, [](const Pending& p) { return !p.fd.valid(); });

  if (fds[0].revents & POLLIN) {
    while (true) {
      int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      pending_.push_back({UniqueFd(fd), {}, SocketAddress::peerOf(fd).toString()});
    }
  }
  return complete;
}

}  // namespace hoop
