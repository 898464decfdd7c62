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

#include "base/hash.h"
#include "base/logging.h"
#include "base/wire.h"
#include "core/bootstrap_wire.h"
#include "transport/tcp/handshake_acceptor.h"

namespace hoop {

std::string PeerInfo::describe() const {
  return str("rank ", rank, " (host ", hostName, ", pid ", pid, ")");
}

hoopUniqueId BootstrapId::encode() const {
  WireWriter out;
  out.u32(kBootstrapIdMagic);
  out.u16(kBootstrapWireVersion);
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
  if (in.u32() != kBootstrapIdMagic) {
    fail(hoopInvalidArgument,
         "not a hoop unique id (bad magic): pass every rank the id hoopGetUniqueId returned");
  }
  if (uint16_t version = in.u16(); version != kBootstrapWireVersion) {
    fail(hoopInvalidArgument, "unique id of version ", version, ", this hoop reads ",
         kBootstrapWireVersion);
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
  HandshakeAcceptor acceptor(listener_.get(), registrationBytes());
  std::vector<std::optional<UniqueFd>> registered;
  std::vector<PeerInfo> peers;
  size_t arrived = 0;
  std::string fatal;

  auto replyError = [&](int fd, const std::string& message) {
    auto reply = encodeRendezvousError(message);
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
    auto table = encodeRendezvousTable(peers);
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
                                 Clock::time_point deadline, const std::function<bool()>& aborted) {
  std::string rootName = str("the rendezvous root at ", id.root.toString());
  UniqueFd fd = connectWithRetry(id.root, deadline, aborted, rootName);
  Registration r;
  r.secret = id.secret;
  r.jobTag = id.jobTag;
  r.nranks = static_cast<uint32_t>(nranks);
  r.info = describeSelf(SocketAddress::localOf(fd.get()));
  r.info.rank = rank;
  auto bytes = encodeRegistration(r);
  sendAll(fd.get(), bytes.data(), bytes.size(), deadline, "the registration to " + rootName);
  if (aborted) {
    // The answer comes once every rank has registered, which may take long: look at `aborted`
    // every 50 ms meanwhile (hoopCommAbort promises 100 ms). The deadline is recvAll's to report.
    pollfd entry{fd.get(), POLLIN, 0};
    while (Clock::now() < deadline) {
      const int ready = ::poll(&entry, 1, 50);
      if (ready > 0 || (ready < 0 && errno != EINTR)) break;
      if (aborted()) {
        fail(hoopInvalidUsage, "rank ", rank, ": initialisation was aborted (hoopCommAbort) while ",
             "waiting for ", rootName);
      }
    }
  }

  return readRendezvousAnswer(
      [&](void* data, size_t size) {
        recvAll(fd.get(), data, size, deadline, "the rendezvous answer from " + rootName);
      },
      nranks, rank, rootName);
}

}  // namespace hoop
