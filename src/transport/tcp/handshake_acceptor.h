// Accepts connections on a listening socket and collects each one's fixed-size first message
// without letting a slow or silent stranger hold up anyone else (everything is non-blocking).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "transport/tcp/socket.h"

namespace hoop {

class HandshakeAcceptor {
 public:
  struct Arrival {
    UniqueFd fd;
    std::vector<uint8_t> hello;  // exactly helloBytes
    std::string from;            // peer address, for log messages
  };

  HandshakeAcceptor(int listenFd, size_t helloBytes)
      : listenFd_(listenFd), helloBytes_(helloBytes) {}

  // Sleeps at most `timeout` for activity on the listener, the pending connections or `wakeFd`
  // (-1 for none; *woken tells whether it fired), then returns the connections whose hello is
  // complete. Connections that close early are dropped and logged.
  std::vector<Arrival> poll(std::chrono::milliseconds timeout, int wakeFd = -1,
                            bool* woken = nullptr);

 private:
  struct Pending {
    UniqueFd fd;
    std::vector<uint8_t> buffer;
    std::string from;
  };
  int listenFd_;
  size_t helloBytes_;
  std::vector<Pending> pending_;
};

}  // namespace hoop
