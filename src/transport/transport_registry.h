// Every transport this process can use, in the order of preference, and how HOOP_TRANSPORT
// steers the choice among them. The built-in ones (shm, rdma, tcp) register themselves on first
// use; a program or a test adds its own with add() before its communicators are created.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "transport/transport.h"

namespace hoop {

class TransportRegistry {
 public:
  // The process's registry, with the built-in transports in it.
  static TransportRegistry& global();

  // Adds `transport`, tried before every transport of a larger `preference` (shm 10, rdma 50,
  // tcp 1000: the fastest path first, tcp, which reaches everyone, last). Throws
  // hoopInvalidUsage when a transport of that name is already registered.
  void add(std::unique_ptr<Transport> transport, int preference);

  // In the order of preference. The transports stay registered for the life of the process.
  std::vector<Transport*> all() const;
  Transport* find(std::string_view name) const;
  // "shm, rdma, tcp": for messages.
  std::string names() const;

 private:
  struct Entry {
    int preference;
    std::unique_ptr<Transport> transport;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// The transports a user allows. HOOP_TRANSPORT holds a comma list of registered names: "tcp"
// forces TCP, "shm,tcp" allows only those two, a leading ^ excludes instead ("^shm": everything
// but shared memory). Unset or empty allows everything.
class TransportPolicy {
 public:
  TransportPolicy() = default;
  // Throws hoopInvalidArgument naming HOOP_TRANSPORT for a name no transport registered.
  static TransportPolicy parse(std::string_view text,
                               const TransportRegistry& registry = TransportRegistry::global());
  static TransportPolicy fromEnv();

  bool allows(std::string_view name) const;
  // Whether it lists `name` as allowed by name (HOOP_TRANSPORT=rdma), not merely leaves it in.
  bool names(std::string_view name) const;
  // The setting as the user wrote it (empty when unset), for messages.
  const std::string& text() const { return text_; }

 private:
  bool exclude_ = true;  // with nothing listed: everything allowed
  std::vector<std::string> listed_;
  std::string text_;
};

// The transport that carries `pair`'s data: the first in the order of preference that the policy
// allows and that can reach the peer. Throws hoopInvalidArgument naming HOOP_TRANSPORT, the peer
// and why each allowed transport cannot, when none is left (HOOP_TRANSPORT=shm with a peer on
// another host).
// `passedOver`, when given, gets "rdma: why" for each allowed transport tried before the chosen
// one whose explainsFallback() is set ("" when none).
Transport& chooseTransport(const TransportPolicy& policy, const PeerPair& pair,
                           const TransportRegistry& registry = TransportRegistry::global(),
                           std::string* passedOver = nullptr);

}  // namespace hoop
