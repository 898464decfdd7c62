#include "loopback_pair.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/secret.h"
#include "spin_wait.h"
#include "transport/tcp/tcp_transport.h"

namespace hoop::micro {
namespace {

constexpr auto kSetupTimeout = std::chrono::seconds(10);

UniqueFd listenOnLoopback() { return listenOn(SocketAddress::parse("127.0.0.1:0"), 16, false); }

}  // namespace

HoopPair connectHoopPair(int streams) {
  const Secret secret = Secret::random();
  constexpr uint64_t kJobTag = 0x6d6963726fu;  // "micro"
  UniqueFd listener0 = listenOnLoopback();
  UniqueFd listener1 = listenOnLoopback();
  std::vector<TcpPeer> peers = {{SocketAddress::localOf(listener0.get()), "rank 0"},
                                {SocketAddress::localOf(listener1.get()), "rank 1"}};
  TcpTransport transport0(TcpOptions{0, secret, kJobTag, streams, {}}, std::move(listener0), peers);
  TcpTransport transport1(TcpOptions{1, secret, kJobTag, streams, {}}, std::move(listener1), peers);
  const auto deadline = Clock::now() + kSetupTimeout;
  // One thread is enough: the lower rank's connect completes into rank 1's listen backlog
  // without waiting for rank 1 to accept (tcp_transport.h), so rank 1 accepts afterwards.
  HoopPair pair;
  pair.rank0 = transport0.establish(1, deadline, nullptr);
  pair.rank1 = transport1.establish(0, deadline, nullptr);
  return pair;
}

RawPair connectRawPair() {
  UniqueFd listener = listenOnLoopback();
  const auto deadline = Clock::now() + kSetupTimeout;
  RawPair pair;
  pair.near = connectWithRetry(SocketAddress::localOf(listener.get()), deadline, nullptr,
                               "the loopback listener");
  // The listener is non-blocking; the connection is in its backlog by now, but wait for it
  // rather than rely on that.
  pollfd ready{listener.get(), POLLIN, 0};
  const int timeoutMs = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(kSetupTimeout).count());
  if (::poll(&ready, 1, timeoutMs) != 1) fail(hoopSystemError, "loopback accept timed out");
  // accept4 without SOCK_NONBLOCK: the accepted socket blocks, whatever the listener does.
  pair.far = UniqueFd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!pair.far.valid()) fail(hoopSystemError, "accept: ", errnoText(errno));
  tuneDataSocket(pair.near.get(), {});
  tuneDataSocket(pair.far.get(), {});
  return pair;
}

bool sendFull(int fd, const void* data, size_t bytes, bool spin) {
  const char* p = static_cast<const char*>(data);
  const int flags = MSG_NOSIGNAL | (spin ? MSG_DONTWAIT : 0);
  SpinWait wait;
  while (bytes > 0) {
    const ssize_t sent = ::send(fd, p, bytes, flags);
    wait.afterPoll(sent > 0);
    if (sent < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return false;
    }
    p += sent;
    bytes -= static_cast<size_t>(sent);
  }
  return true;
}

bool recvFull(int fd, void* data, size_t bytes, bool spin) {
  char* p = static_cast<char*>(data);
  // MSG_WAITALL lets a blocking receive of a large message finish in one call.
  const int flags = spin ? MSG_DONTWAIT : MSG_WAITALL;
  SpinWait wait;
  while (bytes > 0) {
    const ssize_t got = ::recv(fd, p, bytes, flags);
    wait.afterPoll(got > 0);
    if (got == 0) return false;  // the other side shut down
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return false;
    }
    p += got;
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

}  // namespace hoop::micro
