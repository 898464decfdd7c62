#include "transport/transport_registry.h"

#include <algorithm>

#include "base/env.h"
#include "base/error.h"
#include "transport/rdma/rdma_transport.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_link_transport.h"

namespace hoop {

TransportRegistry& TransportRegistry::global() {
  static TransportRegistry registry;
  static std::once_flag builtIns;
  std::call_once(builtIns, [] {
    registry.add(std::make_unique<ShmTransport>(), 10);
    registry.add(std::make_unique<RdmaTransport>(), 50);
    registry.add(std::make_unique<TcpLinkTransport>(), 1000);
  });
  return registry;
}

void TransportRegistry::add(std::unique_ptr<Transport> transport, int preference) {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.transport->name() == transport->name()) {
      fail(hoopInvalidUsage, "a transport named '", transport->name(), "' is already registered");
    }
  }
  // Stable: of equal preference, the one registered first is tried first.
  auto at = std::upper_bound(entries_.begin(), entries_.end(), preference,
                             [](int p, const Entry& entry) { return p < entry.preference; });
  entries_.insert(at, Entry{preference, std::move(transport)});
}

std::vector<Transport*> TransportRegistry::all() const {
  std::lock_guard lock(mutex_);
  std::vector<Transport*> transports;
  for (const Entry& entry : entries_) transports.push_back(entry.transport.get());
  return transports;
}

Transport* TransportRegistry::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.transport->name() == name) return entry.transport.get();
  }
  return nullptr;
}

std::string TransportRegistry::names() const {
  std::string text;
  for (const Transport* transport : all()) {
    text += str(text.empty() ? "" : ", ", transport->name());
  }
  return text;
}

TransportPolicy TransportPolicy::parse(std::string_view text, const TransportRegistry& registry) {
  TransportPolicy policy;
  policy.text_ = std::string(text);
  const bool exclude = !text.empty() && text.front() == '^';
  if (exclude) text.remove_prefix(1);
  if (text.empty()) {
    if (exclude) fail(hoopInvalidArgument, "HOOP_TRANSPORT='^' names no transport to exclude");
    return policy;
  }
  policy.exclude_ = exclude;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    const std::string_view name =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    if (registry.find(name) == nullptr) {
      fail(hoopInvalidArgument, "HOOP_TRANSPORT='", policy.text_, "': unknown transport '", name,
           "' (known: ", registry.names(), "; a leading ^ excludes, e.g. ^shm)");
    }
    policy.listed_.emplace_back(name);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return policy;
}

TransportPolicy TransportPolicy::fromEnv() {
  auto text = envString("HOOP_TRANSPORT");
  return text ? parse(*text) : TransportPolicy();
}

bool TransportPolicy::allows(std::string_view name) const {
  const bool listed = std::find(listed_.begin(), listed_.end(), name) != listed_.end();
  return listed != exclude_;
}

bool TransportPolicy::names(std::string_view name) const {
  return !exclude_ && std::find(listed_.begin(), listed_.end(), name) != listed_.end();
}

Transport& chooseTransport(const TransportPolicy& policy, const PeerPair& pair,
                           const TransportRegistry& registry, std::string* passedOver) {
  std::string reasons;
  std::string explained;
  PeerPair asked = pair;
  for (Transport* transport : registry.all()) {
    if (!policy.allows(transport->name())) continue;
    asked.named = policy.names(transport->name());
    std::string whyNot = transport->whyNot(asked);
    if (whyNot.empty()) {
      if (passedOver != nullptr) *passedOver = explained;
      return *transport;
    }
    if (transport->explainsFallback()) {
      explained += str(explained.empty() ? "" : "; ", whyNot);
    }
    reasons += str(reasons.empty() ? "" : "; ", whyNot);
  }
  fail(hoopInvalidArgument, "HOOP_TRANSPORT='", policy.text(),
       "' leaves no transport that reaches ", pair.peerName,
       pair.sameHost ? " on this host" : " on another host", reasons.empty() ? "" : ": ", reasons,
       " (allow tcp, or unset HOOP_TRANSPORT)");
}

}  // namespace hoop
