#include "core/bootstrap.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>

#include "core/hash.h"
#include "core/logging.h"
#include "core/wire.h"
#include "transport/tcp/handshake_acceptor.h"

namespace hoop {
namespace {

constexpr uint32_t kIdMagic = 0x50494f48;        // "HOIP"
constexpr uint32_t kRegisterMagic = 0x42504f48;  // "HOPB"
constexpr uint16_t kWireVersion = 1;
constexpr size_t kHostNameWidth = 64;
constexpr uint16_t kStatusOk = 0;
constexpr uint16_t kStatusError = 1;
constexpr size_t kMaxErrorText = 4096;

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

// Registration, client to root. Fixed size, so the root reads exactly this many bytes.
struct Registration {
  Secret secret;
  uint64_t jobTag = 0;
  uint32_t nranks = 0;
  PeerInfo info;
};

void writePeer(WireWriter& out, const PeerInfo& info) {
  out.u32(static_cast<uint32_t>(info.pid));
  out.u64(info.hostId);
  out.fixedString(info.hostName, kHostNameWidth);
  writeAddress(out, info.listenAddress);
}

PeerInfo readPeer(WireReader& in, int rank) {
  PeerInfo info;
  info.rank = rank;
  info.pid = static_cast<int>(in.u32());
  info.hostId = in.u64();
  info.hostName = in.fixedString(kHostNameWidth);
  info.listenAddress = readAddress(in);
  return info;
}

std::vector<uint8_t> encodeRegistration(const Registration& r) {
  WireWriter out;
  out.u32(kRegisterMagic);
  out.u16(kWireVersion);
  out.u16(0);
  out.raw(r.secret.bytes.data(), r.secret.bytes.size());
  out.u64(r.jobTag);
  out.u32(r.nranks);
  out.u32(static_cast<uint32_t>(r.info.rank));
  writePeer(out, r.info);
  return out.bytes();
}

const size_t kRegistrationBytes = encodeRegistration(Registration{}).size();
const size_t kPeerBytes = [] {
  WireWriter out;
  writePeer(out, PeerInfo{});
  return out.bytes().size();
}();

// Throws (hoopRemoteError) for anything that is not a registration of this wire version.
Registration decodeRegistration(const std::vector<uint8_t>& bytes) {
  WireReader in(bytes.data(), bytes.size(), "rendezvous registration");
  if (in.u32() != kRegisterMagic) fail(hoopRemoteError, "not a hoop rendezvous message");
  if (uint16_t version = in.u16(); version != kWireVersion) {
    fail(hoopRemoteError, "rendezvous wire version ", version, ", this hoop speaks ", kWireVersion);
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

std::vector<uint8_t> encodeReplyHeader(uint16_t status) {
  WireWriter out;
  out.u32(kRegisterMagic);
  out.u16(kWireVersion);
  out.u16(status);
  return out.bytes();
}

std::vector<uint8_t> encodeTable(const std::vector<PeerInfo>& peers) {
  WireWriter out;
  out.raw(encodeReplyHeader(kStatusOk).data(), 8);
  out.u32(static_cast<uint32_t>(peers.size()));
  for (const auto& peer : peers) writePeer(out, peer);
  return out.bytes();
}

std::vector<uint8_t> encodeErrorReply(const std::string& message) {
  WireWriter out;
  out.raw(encodeReplyHeader(kStatusError).data(), 8);
  std::string text = message.substr(0, kMaxErrorText);
  out.u32(static_cast<uint32_t>(text.size()));
  out.raw(text.data(), text.size());
  return out.bytes();
}

}  // namespace

std::string PeerInfo::describe() const {
  return str("rank ", rank, " (host ", hostName, ", pid ", pid, ")");
}

uint64_t localHostId() {
  std::string identity = localHostName();
  if (std::getenv("HOOP_HOSTNAME") == nullptr) {
    std::ifstream bootId("/proc/sys/kernel/random/boot_id");
    std::string line;
    std::getline(bootId, line);
    identity += "/" + line;
  }
  return fnv1a(identity);
}

hoopUniqueId BootstrapId::encode() const {
  WireWriter out;
  out.u32(kIdMagic);
  out.u16(kWireVersion);
  out.u16(authenticated ? 1 : 0);
  writeAddress(out, root);
  out.raw(secret.bytes.data(), secret.bytes.size());
  out.u64(jobTag);
  hoopUniqueId id{};
  std::memcpy(id.internal, out.bytes().data(), out.bytes().size());
  return id;
}

BootstrapId BootstrapId::decode(const hoopUniqueId& id) {
  WireReader in(id.internal, sizeof(id.internal), "unique id");
  if (in.u32() != kIdMagic) {
    fail(hoopInvalidArgument,
         "not a hoop unique id (bad magic): pass every rank the id hoopGetUniqueId returned");
  }
  if (uint16_t version = in.u16(); version != kWireVersion) {
    fail(hoopInvalidArgument, "unique id of version ", version, ", this hoop reads ", kWireVersion);
  }
  BootstrapId decoded;
  decoded.authenticated = (in.u16() & 1) != 0;
  decoded.root = readAddress(in);
  in.raw(decoded.secret.bytes.data(), decoded.secret.bytes.size());
  decoded.jobTag = in.u64();
  return decoded;
}

RootService::RootService(const SocketAddress& address, const BootstrapId& id,
                         std::chrono::milliseconds timeout)
    : id_(id), timeout_(timeout) {
  listener_ = listenOn(address, 1024, /*reuseAddress=*/true);
  address_ = SocketAddress::localOf(listener_.get());
  wakeup_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wakeup_.valid()) fail(hoopSystemError, "eventfd: ", errnoText(errno));
  thread_ = std::thread([this] { run(); });
}

RootService::~RootService() {
  uint64_t one = 1;
  if (write(wakeup_.get(), &one, sizeof(one)) < 0) {
    // Nothing to do: the thread also stops at its deadline.
  }
  if (thread_.joinable()) thread_.join();
}

void RootService::run() {
  const auto deadline = Clock::now() + timeout_;
  HandshakeAcceptor acceptor(listener_.get(), kRegistrationBytes);
  std::vector<std::optional<UniqueFd>> registered;
  std::vector<PeerInfo> peers;
  size_t arrived = 0;
  std::string fatal;

  auto replyError = [&](int fd, const std::string& message) {
    auto reply = encodeErrorReply(message);
    try {
      sendAll(fd, reply.data(), reply.size(), Clock::now() + std::chrono::seconds(2), "error");
    } catch (const Error&) {
      // The client is gone; it will see its own error.
    }
  };
  // Validates one complete registration and gives it its place in the table.
  auto admit = [&](HandshakeAcceptor::Arrival& client) {
    Registration r;
    try {
      r = decodeRegistration(client.hello);
    } catch (const Error& e) {
      log(LogLevel::kWarn, LogSubsys::kBootstrap, -1, "rendezvous refused ", client.from, ": ",
          e.what());
      return;
    }
    if (!r.secret.matches(id_.secret) || r.jobTag != id_.jobTag) {
      log(LogLevel::kWarn, LogSubsys::kBootstrap, -1, "rendezvous refused ", client.from,
          ": it did not present this job's secret");
      return;
    }
    int rank = r.info.rank;
    if (peers.empty()) {
      if (r.nranks < 1 || r.nranks > (1u << 20)) {
        replyError(client.fd.get(), str("nranks ", r.nranks, " is out of range"));
        return;
      }
      peers.resize(r.nranks);
      registered.resize(r.nranks);
    }
    if (r.nranks != peers.size()) {
      fatal = str("rank ", rank, " (host ", r.info.hostName, ", pid ", r.info.pid,
                  ") was started with nranks=", r.nranks,
                  " but other ranks with nranks=", peers.size());
    } else if (rank < 0 || static_cast<size_t>(rank) >= peers.size()) {
      fatal = str("a process (host ", r.info.hostName, ", pid ", r.info.pid,
                  ") registered as rank ", rank, " of ", peers.size());
    } else if (registered[rank].has_value()) {
      fatal = str("rank ", rank, " registered twice: by ", peers[rank].describe(), " and by pid ",
                  r.info.pid, " on ", r.info.hostName);
    }
    if (!fatal.empty()) {
      replyError(client.fd.get(), fatal);
      return;
    }
    peers[rank] = r.info;
    registered[rank] = std::move(client.fd);
    ++arrived;
    log(LogLevel::kTrace, LogSubsys::kBootstrap, -1, "rendezvous: ", peers[rank].describe(),
        " registered (", arrived, "/", peers.size(), ")");
  };

  while (fatal.empty() && (peers.empty() || arrived < peers.size())) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      std::string missing;
      for (size_t r = 0; r < registered.size(); ++r) {
        if (!registered[r]) missing += str(missing.empty() ? "" : ",", r);
      }
      fatal = str(
          "rendezvous timed out after ", timeout_.count() / 1000, " s: ",
          peers.empty() ? std::string("no rank arrived") : "ranks " + missing + " never arrived",
          " (HOOP_INIT_TIMEOUT)");
      break;
    }
    bool cancelled = false;
    std::vector<HandshakeAcceptor::Arrival> arrivals;
    try {
      arrivals =
          acceptor.poll(std::min(left, std::chrono::milliseconds(1000)), wakeup_.get(), &cancelled);
    } catch (const Error& e) {
      fatal = e.what();
      break;
    }
    if (cancelled) {
      fatal = "rendezvous cancelled: the process that started it is shutting down";
      break;
    }
    for (auto& arrival : arrivals) {
      if (fatal.empty()) admit(arrival);
    }
  }

  if (fatal.empty()) {
    auto table = encodeTable(peers);
    for (size_t r = 0; r < registered.size(); ++r) {
      try {
        sendAll(registered[r]->get(), table.data(), table.size(),
                deadline + std::chrono::seconds(5), "the rendezvous table");
      } catch (const Error& e) {
        log(LogLevel::kWarn, LogSubsys::kBootstrap, -1, "rendezvous: could not answer ",
            peers[r].describe(), ": ", e.what());
      }
    }
    log(LogLevel::kInfo, LogSubsys::kBootstrap, -1, "rendezvous at ", address_.toString(),
        " complete: ", peers.size(), " ranks");
  } else {
    log(LogLevel::kWarn, LogSubsys::kBootstrap, -1, "rendezvous at ", address_.toString(),
        " failed: ", fatal);
    for (auto& fd : registered) {
      if (fd) replyError(fd->get(), fatal);
    }
  }
  finished_.store(true, std::memory_order_release);
}

namespace {

// Root services that outlive the hoopGetUniqueId call that started them; reaped once finished.
struct RootRegistry {
  std::mutex mutex;
  std::vector<std::unique_ptr<RootService>> services;
};

RootRegistry& rootRegistry() {
  static RootRegistry registry;
  return registry;
}

}  // namespace

void adoptRootService(std::unique_ptr<RootService> service) {
  auto& registry = rootRegistry();
  std::lock_guard lock(registry.mutex);
  std::erase_if(registry.services, [](const auto& s) { return s->finished(); });
  registry.services.push_back(std::move(service));
}

std::vector<PeerInfo> rendezvous(const BootstrapId& id, int nranks, int rank,
                                 const std::function<PeerInfo(const SocketAddress&)>& describeSelf,
                                 Clock::time_point deadline) {
  std::string rootName = str("the rendezvous root at ", id.root.toString());
  UniqueFd fd = connectWithRetry(id.root, deadline, nullptr, rootName);
  Registration r;
  r.secret = id.secret;
  r.jobTag = id.jobTag;
  r.nranks = static_cast<uint32_t>(nranks);
  r.info = describeSelf(SocketAddress::localOf(fd.get()));
  r.info.rank = rank;
  auto bytes = encodeRegistration(r);
  sendAll(fd.get(), bytes.data(), bytes.size(), deadline, "the registration to " + rootName);

  uint8_t header[8];
  recvAll(fd.get(), header, sizeof(header), deadline, "the rendezvous answer from " + rootName);
  WireReader in(header, sizeof(header), "rendezvous answer");
  if (in.u32() != kRegisterMagic || in.u16() != kWireVersion) {
    fail(hoopRemoteError, rootName, " is not a hoop rendezvous of this version");
  }
  uint16_t status = in.u16();
  uint8_t countBytes[4];
  recvAll(fd.get(), countBytes, sizeof(countBytes), deadline, "the rendezvous answer");
  uint32_t count = WireReader(countBytes, 4, "rendezvous answer").u32();
  if (status == kStatusError) {
    if (count > kMaxErrorText) fail(hoopRemoteError, "malformed rendezvous error");
    std::string text(count, '\0');
    recvAll(fd.get(), text.data(), count, deadline, "the rendezvous error");
    fail(hoopInvalidUsage, "rank ", rank, ": rendezvous failed: ", text);
  }
  if (status != kStatusOk || count != static_cast<uint32_t>(nranks)) {
    fail(hoopRemoteError, "malformed rendezvous answer (status ", status, ", ", count, " ranks)");
  }
  std::vector<uint8_t> table(kPeerBytes * count);
  recvAll(fd.get(), table.data(), table.size(), deadline, "the rendezvous table");
  WireReader tableIn(table.data(), table.size(), "rendezvous table");
  std::vector<PeerInfo> peers;
  for (int peer = 0; peer < nranks; ++peer) peers.push_back(readPeer(tableIn, peer));
  return peers;
}

}  // namespace hoop
