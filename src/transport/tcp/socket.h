// Sockets as RAII values and the few blocking helpers setup code needs. Every blocking helper
// takes a deadline and an abort check, so no setup step can hang past HOOP_INIT_TIMEOUT.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/unique_fd.h"

namespace hoop {

// An IPv4 or IPv6 address with port, as a plain value.
class SocketAddress {
 public:
  SocketAddress() = default;
  SocketAddress(const sockaddr* address, socklen_t length);

  // "1.2.3.4:5", "[::1]:5" or "hostname:5" (resolved, first result).
  static SocketAddress parse(const std::string& hostPort);
  // Address of a connected or bound socket.
  static SocketAddress localOf(int fd);
  static SocketAddress peerOf(int fd);

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const { return length_; }
  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  bool isLoopback() const;
  std::string toString() const;

 private:
  sockaddr_storage storage_{};
  socklen_t length_ = 0;
};

// Listening socket bound to `address` (port 0 picks one); non-blocking, close-on-exec.
UniqueFd listenOn(const SocketAddress& address, int backlog, bool reuseAddress);

// Connects, retrying refused or unreachable attempts with backoff until the deadline (the root
// may not be listening yet). `describe` names the target for the error message.
UniqueFd connectWithRetry(const SocketAddress& address, Clock::time_point deadline,
                          const std::function<bool()>& aborted, const std::string& describe);

// Blocking exchange with a deadline; on failure throw hoop::Error naming `what`.
void sendAll(int fd, const void* data, size_t bytes, Clock::time_point deadline,
             const std::string& what);
void recvAll(int fd, void* data, size_t bytes, Clock::time_point deadline, const std::string& what);

void setNonBlocking(int fd);

// The data path's socket options beyond TCP_NODELAY, which every data socket gets.
struct DataSocketTuning {
  int bufferBytes = 0;        // SO_SNDBUF and SO_RCVBUF; 0 leaves the kernel's autotuning alone
  std::string congestion;     // TCP_CONGESTION; empty leaves the kernel's default
  int notsentLowatBytes = 0;  // TCP_NOTSENT_LOWAT; 0 leaves the kernel's default (no limit)
};
// A congestion control the kernel refuses is left at the default (checkCongestionControl
// reports it before any connection is made).
void tuneDataSocket(int fd, const DataSocketTuning& tuning);
// Throws hoop::Error when this process may not give its TCP sockets the congestion control
// `name` (not built into the kernel, or not in net.ipv4.tcp_allowed_congestion_control).
void checkCongestionControl(const std::string& name);

}  // namespace hoop
