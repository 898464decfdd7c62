#include "transport/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "base/error.h"

namespace hoop {

SocketAddress::SocketAddress(const sockaddr* address, socklen_t length) {
  if (length > sizeof(storage_)) fail(hoopInternalError, "socket address too long: ", length);
  std::memcpy(&storage_, address, length);
  length_ = length;
}

SocketAddress SocketAddress::parse(const std::string& hostPort) {
  std::string host;
  std::string port;
  if (!hostPort.empty() && hostPort[0] == '[') {
    size_t close = hostPort.find(']');
    if (close == std::string::npos || close + 1 >= hostPort.size() || hostPort[close + 1] != ':') {
      fail(hoopInvalidArgument, "bad address '", hostPort, "': expected [ipv6]:port");
    }
    host = hostPort.substr(1, close - 1);
    port = hostPort.substr(close + 2);
  } else {
    size_t colon = hostPort.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      fail(hoopInvalidArgument, "bad address '", hostPort, "': expected host:port");
    }
    host = hostPort.substr(0, colon);
    port = hostPort.substr(colon + 1);
  }
  char* end = nullptr;
  long portNumber = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || portNumber < 0 || portNumber > 65535) {
    fail(hoopInvalidArgument, "bad port in address '", hostPort, "'");
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  int status = getaddrinfo(host.c_str(), port.c_str(), &hints, &results);
  if (status != 0 || results == nullptr) {
    fail(hoopInvalidArgument, "cannot resolve '", host, "': ", gai_strerror(status));
  }
  SocketAddress address(results->ai_addr, results->ai_addrlen);
  freeaddrinfo(results);
  return address;
}

SocketAddress SocketAddress::localOf(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
    fail(hoopSystemError, "getsockname: ", errnoText(errno));
  }
  return SocketAddress(reinterpret_cast<sockaddr*>(&storage), length);
}

SocketAddress SocketAddress::peerOf(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof(storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return {};
  return SocketAddress(reinterpret_cast<sockaddr*>(&storage), length);
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  }
  return 0;
}

void SocketAddress::setPort(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
}

bool SocketAddress::isLoopback() const {
  if (family() == AF_INET) {
    uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr);
    return (ip >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  }
  return false;
}

std::string SocketAddress::toString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, host,
              sizeof(host));
    return str(host, ':', port());
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, host,
              sizeof(host));
    return str('[', host, "]:", port());
  }
  return "(no address)";
}

UniqueFd listenOn(const SocketAddress& address, int backlog, bool reuseAddress) {
  UniqueFd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) fail(hoopSystemError, "socket: ", errnoText(errno));
  int one = 1;
  if (reuseAddress) setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd.get(), address.get(), address.length()) != 0) {
    fail(hoopSystemError, "cannot listen on ", address.toString(), ": ", errnoText(errno));
  }
  if (::listen(fd.get(), backlog) != 0) {
    fail(hoopSystemError, "listen on ", address.toString(), ": ", errnoText(errno));
  }
  return fd;
}

UniqueFd connectWithRetry(const SocketAddress& address, Clock::time_point deadline,
                          const std::function<bool()>& aborted, const std::string& describe) {
  auto backoff = std::chrono::milliseconds(1);
  int lastError = 0;
  while (true) {
    UniqueFd fd(::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) fail(hoopSystemError, "socket: ", errnoText(errno));
    if (::connect(fd.get(), address.get(), address.length()) == 0) return fd;
    lastError = errno;
    bool transient = lastError == ECONNREFUSED || lastError == ETIMEDOUT ||
                     lastError == ENETUNREACH || lastError == EHOSTUNREACH ||
                     lastError == ECONNRESET || lastError == EINTR || lastError == EAGAIN;
    if (!transient) {
      fail(hoopSystemError, "cannot connect to ", describe, " at ", address.toString(), ": ",
           errnoText(lastError));
    }
    if (aborted && aborted()) fail(hoopInvalidUsage, "aborted while connecting to ", describe);
    if (Clock::now() + backoff > deadline) {
      fail(hoopTimeout, "timed out connecting to ", describe, " at ", address.toString(),
           " (last error: ", errnoText(lastError),
           "); is it running, and is HOOP_INIT_TIMEOUT long enough?");
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(100));
  }
}

namespace {

// Waits for `events` on fd until the deadline; false on timeout.
bool waitFor(int fd, short events, Clock::time_point deadline) {
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd entry{fd, events, 0};
    int ready = ::poll(&entry, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) fail(hoopSystemError, "poll: ", errnoText(errno));
  }
}

}  // namespace

void sendAll(int fd, const void* data, size_t bytes, Clock::time_point deadline,
             const std::string& what) {
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t sent = ::send(fd, cursor, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent > 0) {
      cursor += sent;
      bytes -= static_cast<size_t>(sent);
      continue;
    }
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!waitFor(fd, POLLOUT, deadline)) fail(hoopTimeout, "timed out sending ", what);
      continue;
    }
    fail(hoopRemoteError, "connection lost sending ", what, ": ", errnoText(errno));
  }
}

void recvAll(int fd, void* data, size_t bytes, Clock::time_point deadline,
             const std::string& what) {
  char* cursor = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t got = ::recv(fd, cursor, bytes, MSG_DONTWAIT);
    if (got > 0) {
      cursor += got;
      bytes -= static_cast<size_t>(got);
      continue;
    }
    if (got == 0) fail(hoopRemoteError, "connection closed by the peer while receiving ", what);
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!waitFor(fd, POLLIN, deadline)) fail(hoopTimeout, "timed out receiving ", what);
      continue;
    }
    fail(hoopRemoteError, "connection lost receiving ", what, ": ", errnoText(errno));
  }
}

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    fail(hoopSystemError, "fcntl(O_NONBLOCK): ", errnoText(errno));
  }
}

void tuneDataSocket(int fd, const DataSocketTuning& tuning) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (!tuning.congestion.empty()) {
    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, tuning.congestion.data(),
               static_cast<socklen_t>(tuning.congestion.size()));
  }
  if (tuning.bufferBytes > 0) {
    // The kernel caps these at net.core.{w,r}mem_max; asking is harmless.
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &tuning.bufferBytes, sizeof(tuning.bufferBytes));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &tuning.bufferBytes, sizeof(tuning.bufferBytes));
  }
  if (tuning.notsentLowatBytes > 0) {
    setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &tuning.notsentLowatBytes,
               sizeof(tuning.notsentLowatBytes));
  }
}

void checkCongestionControl(const std::string& name) {
  UniqueFd probe(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) {
    fail(hoopSystemError, "socket() for a congestion control check: ", errnoText(errno));
  }
  if (setsockopt(probe.get(), IPPROTO_TCP, TCP_CONGESTION, name.data(),
                 static_cast<socklen_t>(name.size())) != 0) {
    fail(hoopInvalidArgument, "HOOP_SOCKET_CONGESTION=", name, ": the kernel refused it (",
         errnoText(errno),
         "); net.ipv4.tcp_allowed_congestion_control lists those a process "
         "may choose, and 'system' keeps the kernel's default");
  }
}

}  // namespace hoop
