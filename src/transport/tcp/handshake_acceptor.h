// Accepts connections on a listening socket and collects each one's fixed-size first message
// without letting a slow or silent stranger hold up anyone else (everything is non-blocking).
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "transport/tcp/socket.h"

namespace hoop {

class HandshakeAcceptor {
 public:
  // At most this many accepted connections wait for their hello at once. A real peer sends its
  // hello right after connecting, so it waits a poll round at most; strangers that connect and
  // stay silent would otherwise pile up one fd each until the process runs out of them.
  static constexpr size_t kMaxPending = 128;

  struct Arrival {
    UniqueFd fd;
    std::vector<uint8_t> hello;  // exactly helloBytes
    std::string from;            // peer address, for log messages
  };

  HandshakeAcceptor(int listenFd, size_t helloBytes)
      : listenFd_(listenFd), helloBytes_(helloBytes) {}

  // Sleeps at most `timeout` for activity on the listener, the pending connections or `wakeFd`
  // (-1 for none; *woken tells whether it fired), then returns the connections whose hello is
  // complete. Connections that close early are dropped and logged; beyond kMaxPending waiting
  // connections the oldest are closed (logged once per poll with how many).
  std::vector<Arrival> poll(std::chrono::milliseconds timeout, int wakeFd = -1,
                            bool* woken = nullptr);

  size_t pendingCount() const { return pending_.size(); }

 private:
  struct Pending {
    UniqueFd fd;
    std::vector<uint8_t> buffer;
    std::string from;
  };
  // Reads what has arrived of p's hello; moves p into `complete` once whole, or closes it
  // (logged) when the peer hung up first.
  void readHello(Pending& p, std::vector<Arrival>& complete);
  void acceptAll(std::vector<Arrival>& complete);

  int listenFd_;
  size_t helloBytes_;
  std::deque<Pending> pending_;  // oldest first
};

}  // namespace hoop
