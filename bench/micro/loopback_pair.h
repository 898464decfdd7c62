// Two connected ends over 127.0.0.1 inside one process, for the TCP microbenchmarks: a hoop
// TcpConnection pair built by two TcpTransports exactly as two ranks build theirs, and a plain
// socket pair with the same socket options as the floor to compare against.
#pragma once

#include <memory>

#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_connection.h"

namespace hoop::micro {

struct HoopPair {
  std::unique_ptr<TcpConnection> rank0;  // the benchmark thread's end
  std::unique_ptr<TcpConnection> rank1;  // the peer thread's end
};

// `streams` sockets per connection (HOOP_SOCKET_NSTREAMS). Throws hoop::Error on failure.
HoopPair connectHoopPair(int streams);

// Blocking sockets with TCP_NODELAY (tuneDataSocket, as hoop's data sockets get), kernel buffer
// autotuning left on, as hoop leaves it by default.
struct RawPair {
  UniqueFd near;  // the benchmark thread's end
  UniqueFd far;   // the peer thread's end
};

RawPair connectRawPair();

// Move exactly `bytes` over a blocking socket; false when the socket was shut down or failed
// (the way one side tells the other to stop). `spin` polls with MSG_DONTWAIT instead of sleeping
// in the kernel (waiting as SpinWait does), the strategy the hoop variants use.
bool sendFull(int fd, const void* data, size_t bytes, bool spin);
bool recvFull(int fd, void* data, size_t bytes, bool spin);

}  // namespace hoop::micro
