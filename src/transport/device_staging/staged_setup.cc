#include "transport/device_staging/staged_setup.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "base/secret.h"
#include "base/wire.h"
#include "transport/tcp/tcp_connection.h"

namespace hoop {
namespace {

constexpr uint32_t kStagedSetupMagic = 0x53444848;  // "HHDS"
constexpr size_t kStagedSetupBytes = 4 + 2 + 16 + 8 + 8;

// The first connection on `listener` that presents `token` within the deadline; others (a
// stranger, a port scanner) are closed and waited past.
UniqueFd acceptWithToken(const UniqueFd& listener, const Secret& token, const PeerPair& pair,
                         Clock::time_point deadline, const std::function<bool()>& aborted) {
  while (true) {
    if (aborted()) fail(hoopRemoteError, "staged device link to ", pair.peerName, ": aborted");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      fail(hoopTimeout, "rank ", pair.self, ": ", pair.peerName,
           " did not connect its staged device link in time (HOOP_INIT_TIMEOUT)");
    }
    pollfd waiting{listener.get(), POLLIN, 0};
    if (::poll(&waiting, 1, static_cast<int>(std::min<int64_t>(left.count(), 100))) <= 0) continue;
    UniqueFd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd) continue;
    std::array<uint8_t, 16> presented{};
    try {
      recvAll(fd.get(), presented.data(), presented.size(),
              std::min(deadline, Clock::now() + std::chrono::seconds(5)),
              "the token of a staged device link");
    } catch (const Error&) {
      continue;
    }
    if (presented == token.bytes) return fd;
    log(LogLevel::kWarn, LogSubsys::kNet, pair.self,
        "refused a connection to the staged device link for ", pair.peerName,
        ": it did not present the link's token");
  }
}

}  // namespace

std::unique_ptr<StagedDeviceConnection> connectStaged(const PeerPair& pair, SetupChannel& setup,
                                                      const StagedLinkAddresses& addresses,
                                                      size_t slots, size_t slotBytes,
                                                      DeviceCallQueue& queue,
                                                      Clock::time_point deadline,
                                                      const std::function<bool()>& aborted) {
  const bool lower = pair.self < pair.peer;
  UniqueFd fd;
  if (lower) {
    SocketAddress own = addresses.own;
    own.setPort(0);
    UniqueFd listener = listenOn(own, 4, /*reuseAddress=*/false);
    const Secret token = Secret::random();
    WireWriter out;
    out.u32(kStagedSetupMagic);
    out.u16(SocketAddress::localOf(listener.get()).port());
    out.raw(token.bytes.data(), token.bytes.size());
    out.u64(slots);
    out.u64(slotBytes);
    setup.send(out.bytes().data(), out.bytes().size());
    fd = acceptWithToken(listener, token, pair, deadline, aborted);
  } else {
    std::array<uint8_t, kStagedSetupBytes> message{};
    setup.recv(message.data(), message.size());
    WireReader in(message.data(), message.size(), "staged device link setup");
    if (in.u32() != kStagedSetupMagic) {
      fail(hoopRemoteError, "staged device link setup with ", pair.peerName,
           ": an unexpected message (another hoop version?)");
    }
    SocketAddress target = addresses.peer;
    target.setPort(in.u16());
    Secret token;
    in.raw(token.bytes.data(), token.bytes.size());
    const uint64_t theirSlots = in.u64();
    const uint64_t theirSlotBytes = in.u64();
    if (theirSlots != slots || theirSlotBytes != slotBytes) {
      fail(hoopInvalidUsage, "staged device link setup with ", pair.peerName, ": it has ",
           theirSlots, " slots of ", theirSlotBytes, " bytes, this rank ", slots, " of ", slotBytes,
           " (the settings differ between the ranks)");
    }
    fd = connectWithRetry(target, deadline, aborted, pair.peerName + "'s staged device link");
    sendAll(fd.get(), token.bytes.data(), token.bytes.size(), deadline,
            "the token of the staged device link to " + pair.peerName);
  }
  tuneDataSocket(fd.get(), DataSocketTuning{});
  setNonBlocking(fd.get());
  std::vector<UniqueFd> streams;
  streams.push_back(std::move(fd));
  auto link = std::make_unique<TcpConnection>(std::move(streams), pair.self, pair.peerName);
  log(LogLevel::kInfo, LogSubsys::kNet, pair.self, "device messages to ", pair.peerName,
      " are staged through host memory over tcp (another host)");
  return std::make_unique<StagedDeviceConnection>(queue, pair.peer, slots, slotBytes,
                                                  std::move(link), pair.peerName);
}

}  // namespace hoop
