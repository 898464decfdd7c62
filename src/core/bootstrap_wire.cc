#include "core/bootstrap_wire.h"

#include <arpa/inet.h>

#include <cstring>

namespace hoop {
namespace {

constexpr size_t kHostNameWidth = 64;
constexpr uint16_t kStatusOk = 0;
constexpr uint16_t kStatusError = 1;

static_assert(kMaxCpus % 64 == 0, "CPU masks travel as whole 64-bit words");

void writePeer(WireWriter& out, const PeerInfo& info) {
  out.u32(static_cast<uint32_t>(info.pid));
  out.u64(info.hostId);
  out.fixedString(info.hostName, kHostNameWidth);
  writeAddress(out, info.listenAddress);
  for (size_t word = 0; word < kMaxCpus / 64; ++word) {
    uint64_t bits = 0;
    for (size_t bit = 0; bit < 64; ++bit) {
      if (info.cpus.test(word * 64 + bit)) bits |= uint64_t{1} << bit;
    }
    out.u64(bits);
  }
  out.u64(info.level2BytesPerCpu);
  for (const uint64_t digest : info.settings) out.u64(digest);
  writeRdmaReach(out, info.rdma);
}

PeerInfo readPeer(WireReader& in, int rank) {
  PeerInfo info;
  info.rank = rank;
  info.pid = static_cast<int>(in.u32());
  info.hostId = in.u64();
  info.hostName = in.fixedString(kHostNameWidth);
  info.listenAddress = readAddress(in);
  for (size_t word = 0; word < kMaxCpus / 64; ++word) {
    const uint64_t bits = in.u64();
    for (size_t bit = 0; bit < 64; ++bit) {
      if ((bits >> bit) & 1) info.cpus.set(word * 64 + bit);
    }
  }
  info.level2BytesPerCpu = static_cast<size_t>(in.u64());
  for (uint64_t& digest : info.settings) digest = in.u64();
  info.rdma = readRdmaReach(in);
  return info;
}

size_t peerBytes() {
  static const size_t bytes = [] {
    WireWriter out;
    writePeer(out, PeerInfo{});
    return out.bytes().size();
  }();
  return bytes;
}

std::vector<uint8_t> encodeReplyHeader(uint16_t status) {
  WireWriter out;
  out.u32(kRegisterMagic);
  out.u16(kBootstrapWireVersion);
  out.u16(status);
  return out.bytes();
}

}  // namespace

void writeAddress(WireWriter& out, const SocketAddress& address) {
  out.u16(static_cast<uint16_t>(address.family()));
  out.u16(address.port());
  uint8_t raw[16] = {};
  if (address.family() == AF_INET) {
    std::memcpy(raw, &reinterpret_cast<const sockaddr_in*>(address.get())->sin_addr, 4);
  } else if (address.family() == AF_INET6) {
    std::memcpy(raw, &reinterpret_cast<const sockaddr_in6*>(address.get())->sin6_addr, 16);
  }
  out.raw(raw, sizeof(raw));
}

SocketAddress readAddress(WireReader& in) {
  uint16_t family = in.u16();
  uint16_t port = in.u16();
  uint8_t raw[16];
  in.raw(raw, sizeof(raw));
  if (family == AF_INET) {
    sockaddr_in ip4{};
    ip4.sin_family = AF_INET;
    ip4.sin_port = htons(port);
    std::memcpy(&ip4.sin_addr, raw, 4);
    return SocketAddress(reinterpret_cast<sockaddr*>(&ip4), sizeof(ip4));
  }
  if (family == AF_INET6) {
    sockaddr_in6 ip6{};
    ip6.sin6_family = AF_INET6;
    ip6.sin6_port = htons(port);
    std::memcpy(&ip6.sin6_addr, raw, 16);
    return SocketAddress(reinterpret_cast<sockaddr*>(&ip6), sizeof(ip6));
  }
  fail(hoopRemoteError, "malformed address family ", family);
}

std::vector<uint8_t> encodeRegistration(const Registration& r) {
  WireWriter out;
  out.u32(kRegisterMagic);
  out.u16(kBootstrapWireVersion);
  out.u16(0);
  out.raw(r.secret.bytes.data(), r.secret.bytes.size());
  out.u64(r.jobTag);
  out.u32(r.nranks);
  out.u32(static_cast<uint32_t>(r.info.rank));
  writePeer(out, r.info);
  return out.bytes();
}

size_t registrationBytes() {
  static const size_t bytes = encodeRegistration(Registration{}).size();
  return bytes;
}

Registration decodeRegistration(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "rendezvous registration");
  if (in.u32() != kRegisterMagic) fail(hoopRemoteError, "not a hoop rendezvous message");
  if (uint16_t version = in.u16(); version != kBootstrapWireVersion) {
    fail(hoopRemoteError, "rendezvous wire version ", version, ", this hoop speaks ",
         kBootstrapWireVersion);
  }
  in.u16();
  Registration r;
  in.raw(r.secret.bytes.data(), r.secret.bytes.size());
  r.jobTag = in.u64();
  r.nranks = in.u32();
  int rank = static_cast<int>(in.u32());
  r.info = readPeer(in, rank);
  return r;
}

std::vector<uint8_t> encodeRendezvousTable(const std::vector<PeerInfo>& peers) {
  WireWriter out;
  out.raw(encodeReplyHeader(kStatusOk).data(), 8);
  out.u32(static_cast<uint32_t>(peers.size()));
  for (const auto& peer : peers) writePeer(out, peer);
  return out.bytes();
}

std::vector<uint8_t> encodeRendezvousError(const std::string& message) {
  WireWriter out;
  out.raw(encodeReplyHeader(kStatusError).data(), 8);
  std::string text = message.substr(0, kMaxRendezvousErrorText);
  out.u32(static_cast<uint32_t>(text.size()));
  out.raw(text.data(), text.size());
  return out.bytes();
}

std::vector<PeerInfo> readRendezvousAnswer(FunctionRef<void(void*, size_t)> readExactly, int nranks,
                                           int rank, const std::string& rootName) {
  uint8_t header[8];
  readExactly(header, sizeof(header));
  WireReader in(header, sizeof(header), "rendezvous answer");
  if (in.u32() != kRegisterMagic || in.u16() != kBootstrapWireVersion) {
    fail(hoopRemoteError, rootName, " is not a hoop rendezvous of this version");
  }
  uint16_t status = in.u16();
  uint8_t countBytes[4];
  readExactly(countBytes, sizeof(countBytes));
  uint32_t count = WireReader(countBytes, 4, "rendezvous answer").u32();
  if (status == kStatusError) {
    if (count > kMaxRendezvousErrorText) fail(hoopRemoteError, "malformed rendezvous error");
    std::string text(count, '\0');
    readExactly(text.data(), count);
    fail(hoopInvalidUsage, "rank ", rank, ": rendezvous failed: ", text);
  }
  if (status != kStatusOk || count != static_cast<uint32_t>(nranks)) {
    fail(hoopRemoteError, "malformed rendezvous answer (status ", status, ", ", count, " ranks)");
  }
  std::vector<uint8_t> table(peerBytes() * count);
  readExactly(table.data(), table.size());
  WireReader tableIn(table.data(), table.size(), "rendezvous table");
  std::vector<PeerInfo> peers;
  for (int peer = 0; peer < nranks; ++peer) peers.push_back(readPeer(tableIn, peer));
  return peers;
}

}  // namespace hoop
