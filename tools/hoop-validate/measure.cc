// Probing a round's pairs and gathering every rank's record (measure.h).
#include "measure.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>
#include <memory>

#include "api/c_api_submit.h"
#include "base/error.h"
#include "topology/link_speed.h"

namespace hoop::validate {

namespace {

// One rank's result of one round, as it travels: plain bytes of fixed size.
struct Record {
  int32_t peer = -1;
  int32_t checkOk = 1;
  char transport[16] = {};
  double lowerToHigherGBps = 0;
  double higherToLowerGBps = 0;
  double bidirectionalGBps = 0;
  double latencyP50Us = 0;
  double latencyP99Us = 0;
  int64_t badMessage = -1;
  int64_t badOffset = -1;
  uint8_t expected = 0;
  uint8_t actual = 0;
  uint8_t padding[6] = {};
};

PatternCheck checkOf(const Record& record) {
  return PatternCheck{.ok = record.checkOk != 0,
                      .message = record.badMessage,
                      .offset = record.badOffset,
                      .expected = record.expected,
                      .actual = record.actual};
}

// Every rank's record, in rank order, on every rank.
template <typename T>
std::vector<T> allGather(hoopComm_t comm, const T& mine, const char* what) {
  int size = 0;
  check(comm, hoopCommCount(comm, &size), what);
  std::vector<T> all(static_cast<size_t>(size));
  check(comm, hoopAllGather(&mine, all.data(), sizeof(T), hoopUint8, comm, nullptr), what);
  return all;
}

// The interface that holds `address`, by name ("" when none does).
std::string interfaceHolding(const SocketAddress& address) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, freeifaddrs);
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != address.family()) continue;
    if (address.family() == AF_INET) {
      const auto* mine = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
      const auto* wanted = reinterpret_cast<const sockaddr_in*>(address.get());
      if (mine->sin_addr.s_addr == wanted->sin_addr.s_addr) return entry->ifa_name;
    } else if (address.family() == AF_INET6) {
      const auto* mine = reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr);
      const auto* wanted = reinterpret_cast<const sockaddr_in6*>(address.get());
      if (std::memcmp(&mine->sin6_addr, &wanted->sin6_addr, sizeof mine->sin6_addr) == 0) {
        return entry->ifa_name;
      }
    }
  }
  return "";
}

}  // namespace

void check(hoopComm_t comm, hoopResult_t result, const char* what) {
  if (result == hoopSuccess) return;
  fail(result, what, ": ", hoopGetLastError(comm));
}

std::vector<Measurement> runRound(hoopComm_t comm, const Round& round,
                                  const LinkProbeOptions& options, int pass) {
  Record mine;
  int self = 0;
  check(comm, hoopCommUserRank(comm, &self), "rank");
  const int peer = round.peerOf[static_cast<size_t>(self)];
  if (peer >= 0) {
    capi::runOn(comm, [&](Communicator& communicator) {
      const LinkProbe probe = probeLink(communicator, peer, options);
      const std::string transport = communicator.transportFor(peer);
      mine.peer = peer;
      std::strncpy(mine.transport, transport.c_str(), sizeof mine.transport - 1);
      mine.lowerToHigherGBps = probe.lowerToHigherGBps;
      mine.higherToLowerGBps = probe.higherToLowerGBps;
      mine.bidirectionalGBps = probe.bidirectionalGBps;
      mine.latencyP50Us = probe.latencyP50Us;
      mine.latencyP99Us = probe.latencyP99Us;
      mine.checkOk = probe.received.ok ? 1 : 0;
      mine.badMessage = probe.received.message;
      mine.badOffset = probe.received.offset;
      mine.expected = probe.received.expected;
      mine.actual = probe.received.actual;
    });
  }
  const std::vector<Record> all = allGather(comm, mine, "gathering a round's results");
  std::vector<Measurement> measurements;
  for (auto [a, b] : round.pairs()) {
    const Record& lower = all[static_cast<size_t>(a)];
    const Record& higher = all[static_cast<size_t>(b)];
    Measurement m;
    m.pass = pass;
    m.phase = round.phase;
    m.round = round.index;
    m.a = a;
    m.b = b;
    m.transport = std::string(lower.transport, strnlen(lower.transport, sizeof lower.transport));
    m.figures.self = a;
    m.figures.peer = b;
    m.figures.lowerToHigherGBps = lower.lowerToHigherGBps;
    m.figures.higherToLowerGBps = lower.higherToLowerGBps;
    m.figures.bidirectionalGBps = lower.bidirectionalGBps;
    m.figures.latencyP50Us = lower.latencyP50Us;
    m.figures.latencyP99Us = lower.latencyP99Us;
    m.atA = checkOf(lower);
    m.atB = checkOf(higher);
    measurements.push_back(std::move(m));
  }
  return measurements;
}

std::vector<RankNic> gatherNics(hoopComm_t comm) {
  struct Wire {
    char name[32] = {};
    double gbps = 0;
  } mine;
  int self = 0;
  check(comm, hoopCommUserRank(comm, &self), "rank");
  capi::runOn(comm, [&](Communicator& communicator) {
    const std::string name = interfaceHolding(communicator.peerAddress(self));
    std::strncpy(mine.name, name.c_str(), sizeof mine.name - 1);
    if (!name.empty()) mine.gbps = static_cast<double>(networkLinkSpeedMbps(name)) / 1000;
  });
  std::vector<RankNic> nics;
  for (const Wire& wire : allGather(comm, mine, "gathering the ranks' NICs")) {
    nics.push_back({std::string(wire.name, strnlen(wire.name, sizeof wire.name)), wire.gbps});
  }
  return nics;
}

}  // namespace hoop::validate
