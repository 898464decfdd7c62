#include "transport/tcp/handshake_acceptor.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "base/logging.h"

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
    if (fds[i + 2].revents != 0) readHello(pending_[i], complete);
  }
  std::erase_if(pending_, [](const Pending& p) { return !p.fd.valid(); });

  if (fds[0].revents & POLLIN) acceptAll(complete);
  return complete;
}

void HandshakeAcceptor::readHello(Pending& p, std::vector<Arrival>& complete) {
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

void HandshakeAcceptor::acceptAll(std::vector<Arrival>& complete) {
  size_t dropped = 0;
  std::string lastDropped;
  while (true) {
    int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) break;
    Pending p{UniqueFd(fd), {}, SocketAddress::peerOf(fd).toString()};
    // A real peer sends its hello right after connecting, so it is usually here already: such a
    // connection never queues, and a crowd of silent strangers cannot push it out.
    readHello(p, complete);
    if (!p.fd.valid()) continue;
    pending_.push_back(std::move(p));
    // Beyond the cap the oldest goes: a stranger that went silent long ago loses its place to
    // the newest arrival, which is where a real peer whose hello is still in flight would be.
    if (pending_.size() > kMaxPending) {
      lastDropped = pending_.front().from;
      pending_.pop_front();
      ++dropped;
    }
  }
  if (dropped > 0) {
    log(LogLevel::kWarn, LogSubsys::kNet, -1, "closed ", dropped,
        " connection(s) that sent no hello (last from ", lastDropped, "): more than ", kMaxPending,
        " were waiting at once");
  }
}

}  // namespace hoop
