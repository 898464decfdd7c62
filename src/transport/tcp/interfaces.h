// Which network interface hoop listens on: HOOP_SOCKET_IFNAME, or a default that skips loopback
// and container bridges when something better exists.
#pragma once

#include <string>
#include <vector>

#include "transport/tcp/socket.h"

namespace hoop {

struct NetInterface {
  std::string name;
  SocketAddress address;  // port 0
};

// Interfaces that are up and have an IPv4 or IPv6 address (IPv6 link-local skipped).
std::vector<NetInterface> listInterfaces();

// HOOP_SOCKET_IFNAME grammar: comma-separated entries; "eth" matches names starting with eth,
// "=eth0" only eth0, a leading "^" on the whole list excludes what it matches instead.
class InterfaceFilter {
 public:
  explicit InterfaceFilter(const std::string& spec);
  bool accepts(const std::string& name) const;
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
  bool exclude_ = false;
  bool exact_ = false;
  std::vector<std::string> names_;
};

// The address to listen on. With HOOP_SOCKET_IFNAME set, the first matching interface (none is an
// immediate hoopInvalidArgument listing what exists). Without it: the interface named
// `nearestNic` (the topology's choice) when it is up with an address of the same family as
// `preferred`, else the interface that holds `preferred` (the address this process already
// reaches the root from) when given, else the first that is not loopback or a container bridge,
// else loopback.
SocketAddress chooseListenAddress(const SocketAddress* preferred,
                                  const std::string& nearestNic = "");

}  // namespace hoop
