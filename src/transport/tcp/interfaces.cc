#include "transport/tcp/interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/env.h"
#include "base/error.h"

namespace hoop {

std::vector<NetInterface> listInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail(hoopSystemError, "getifaddrs: ", errnoText(errno));
  std::vector<NetInterface> found;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || (entry->ifa_flags & IFF_UP) == 0) continue;
    int family = entry->ifa_addr->sa_family;
    if (family == AF_INET) {
      found.push_back({entry->ifa_name, SocketAddress(entry->ifa_addr, sizeof(sockaddr_in))});
    } else if (family == AF_INET6) {
      const auto* ip6 = reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&ip6->sin6_addr)) continue;  // needs a scope id to be useful
      found.push_back({entry->ifa_name, SocketAddress(entry->ifa_addr, sizeof(sockaddr_in6))});
    }
  }
  freeifaddrs(list);
  // IPv4 first: it is what most clusters route.
  std::stable_partition(found.begin(), found.end(),
                        [](const NetInterface& i) { return i.address.family() == AF_INET; });
  return found;
}

InterfaceFilter::InterfaceFilter(const std::string& spec) : spec_(spec) {
  std::string rest = spec;
  if (!rest.empty() && rest[0] == '^') {
    exclude_ = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    exact_ = true;
    rest.erase(0, 1);
  }
  std::stringstream tokens(rest);
  std::string token;
  while (std::getline(tokens, token, ',')) {
    if (!token.empty()) names_.push_back(token);
  }
}

bool InterfaceFilter::accepts(const std::string& name) const {
  bool matched = false;
  for (const auto& wanted : names_) {
    if (exact_ ? name == wanted : name.compare(0, wanted.size(), wanted) == 0) matched = true;
  }
  return exclude_ ? !matched : matched;
}

namespace {

bool sameHostAddress(const SocketAddress& a, const SocketAddress& b) {
  if (a.family() != b.family()) return false;
  SocketAddress left = a;
  SocketAddress right = b;
  left.setPort(0);
  right.setPort(0);
  return left.length() == right.length() &&
         std::memcmp(left.get(), right.get(), left.length()) == 0;
}

std::string describe(const std::vector<NetInterface>& interfaces) {
  std::string text;
  for (const auto& i : interfaces)
    text += str(text.empty() ? "" : ", ", i.name, " ", i.address.toString());
  return text.empty() ? "none" : text;
}

}  // namespace

SocketAddress chooseListenAddress(const SocketAddress* preferred, const std::string& nearestNic) {
  auto interfaces = listInterfaces();
  if (auto spec = envString("HOOP_SOCKET_IFNAME")) {
    InterfaceFilter filter(*spec);
    for (const auto& i : interfaces) {
      if (filter.accepts(i.name)) return i.address;
    }
    fail(
        hoopInvalidArgument, "HOOP_SOCKET_IFNAME='", *spec,
        "' matches no interface that is up with an address; this host has: ", describe(interfaces));
  }
  for (const auto& i : interfaces) {
    // A loopback root means a single-host job: the NIC would not matter, loopback is faster.
    if (!nearestNic.empty() && i.name == nearestNic &&
        (preferred == nullptr ||
         (i.address.family() == preferred->family() && !preferred->isLoopback()))) {
      return i.address;
    }
  }
  if (preferred != nullptr) {
    for (const auto& i : interfaces) {
      if (sameHostAddress(i.address, *preferred)) return i.address;
    }
  }
  InterfaceFilter skipped("^docker,lo,virbr");
  for (const auto& i : interfaces) {
    if (skipped.accepts(i.name)) return i.address;
  }
  for (const auto& i : interfaces) {
    if (i.address.isLoopback()) return i.address;
  }
  fail(hoopSystemError, "no usable network interface: ", describe(interfaces));
}

}  // namespace hoop
