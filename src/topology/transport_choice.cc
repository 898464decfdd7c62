#include "topology/transport_choice.h"

#include <span>

#include "base/env.h"
#include "base/error.h"

namespace hoop {
namespace {

constexpr TransportKind kAllTransports[] = {TransportKind::kShm, TransportKind::kTcp,
                                            TransportKind::kRdma};

// Preference order where each transport works; rdma joins across hosts once it exists.
constexpr TransportKind kWithinHost[] = {TransportKind::kShm, TransportKind::kTcp};
constexpr TransportKind kAcrossHosts[] = {TransportKind::kTcp};

// Why an allowed transport did not reach the peer. tcp reaches every peer, so it never needs one.
const char* whyNot(TransportKind kind) {
  switch (kind) {
    case TransportKind::kShm: return "shm works only between ranks on the same host";
    case TransportKind::kRdma: return "rdma is not available in this build of hoop yet";
    case TransportKind::kTcp: return "tcp reaches every peer";
  }
  return "";
}

}  // namespace

const char* transportName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kShm: return "shm";
    case TransportKind::kTcp: return "tcp";
    case TransportKind::kRdma: return "rdma";
  }
  return "?";
}

TransportPolicy TransportPolicy::parse(std::string_view text) {
  TransportPolicy policy;
  policy.text_ = std::string(text);
  bool exclude = !text.empty() && text.front() == '^';
  if (exclude) text.remove_prefix(1);
  if (text.empty()) {
    if (exclude) fail(hoopInvalidArgument, "HOOP_TRANSPORT='^' names no transport to exclude");
    return policy;
  }
  unsigned listed = 0;
  for (size_t start = 0;;) {
    size_t comma = text.find(',', start);
    std::string_view name =
        text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    bool known = false;
    for (TransportKind kind : kAllTransports) {
      if (name == transportName(kind)) {
        listed |= bit(kind);
        known = true;
      }
    }
    if (!known) {
      fail(hoopInvalidArgument, "HOOP_TRANSPORT='", policy.text_, "': unknown transport '", name,
           "' (known: shm, tcp, rdma; a leading ^ excludes, e.g. ^shm)");
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  policy.allowed_ = exclude ? ~listed : listed;
  return policy;
}

TransportPolicy TransportPolicy::fromEnv() {
  auto text = envString("HOOP_TRANSPORT");
  return text ? parse(*text) : TransportPolicy();
}

TransportKind chooseTransport(const TransportPolicy& policy, bool sameHost, std::string_view peer) {
  std::span<const TransportKind> candidates = sameHost
                                                  ? std::span<const TransportKind>(kWithinHost)
                                                  : std::span<const TransportKind>(kAcrossHosts);
  for (TransportKind kind : candidates) {
    if (policy.allows(kind)) return kind;
  }
  std::string reasons;
  for (TransportKind kind : kAllTransports) {
    if (policy.allows(kind)) reasons += str(reasons.empty() ? "" : "; ", whyNot(kind));
  }
  fail(hoopInvalidArgument, "HOOP_TRANSPORT='", policy.text(),
       "' leaves no transport that reaches ", peer, sameHost ? " on this host" : " on another host",
       reasons.empty() ? "" : ": ", reasons, " (allow tcp, or unset HOOP_TRANSPORT)");
}

}  // namespace hoop
