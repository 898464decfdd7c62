// Fuzzes the rendezvous parsers: the unique id a user passes around, the registration the root
// reads from strangers, and the answer a rank reads from the root. The first byte picks the
// parser; the rest is the message. Every parser must either return or throw hoop::Error, and
// whatever it accepts must survive a re-encoding unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/bootstrap.h"
#include "core/bootstrap_wire.h"

namespace hoop {
namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

bool sameAddress(const SocketAddress& a, const SocketAddress& b) {
  return a.length() == b.length() && std::memcmp(a.get(), b.get(), a.length()) == 0;
}

bool samePeer(const PeerInfo& a, const PeerInfo& b) {
  return a.rank == b.rank && a.pid == b.pid && a.hostId == b.hostId && a.hostName == b.hostName &&
         sameAddress(a.listenAddress, b.listenAddress);
}

void fuzzRegistration(const uint8_t* data, size_t size) {
  Registration first;
  try {
    first = decodeRegistration(std::vector<uint8_t>(data, data + size));
  } catch (const Error&) {
    return;
  }
  check(size >= registrationBytes());
  Registration second = decodeRegistration(encodeRegistration(first));
  check(second.secret.bytes == first.secret.bytes && second.jobTag == first.jobTag &&
        second.nranks == first.nranks && samePeer(second.info, first.info));
}

void fuzzUniqueId(const uint8_t* data, size_t size) {
  hoopUniqueId id{};
  std::memcpy(id.internal, data, std::min(size, sizeof(id.internal)));
  BootstrapId first;
  try {
    first = BootstrapId::decode(id);
  } catch (const Error&) {
    return;
  }
  BootstrapId second = BootstrapId::decode(first.encode());
  check(sameAddress(second.root, first.root) && second.secret.bytes == first.secret.bytes &&
        second.authenticated == first.authenticated && second.jobTag == first.jobTag);
}

void fuzzRendezvousAnswer(const uint8_t* data, size_t size) {
  if (size < 1) return;
  const int nranks = data[0] % 16 + 1;
  size_t offset = 1;
  auto readExactly = [&](void* out, size_t bytes) {
    if (bytes > size - offset) fail(hoopRemoteError, "the root closed the connection");
    std::memcpy(out, data + offset, bytes);
    offset += bytes;
  };
  std::vector<PeerInfo> peers;
  try {
    peers = readRendezvousAnswer(readExactly, nranks, 0, "the fuzzed root");
  } catch (const Error&) {
    return;
  }
  check(peers.size() == static_cast<size_t>(nranks));
  auto again = encodeRendezvousTable(peers);
  size_t replayed = 0;
  auto replay = [&](void* out, size_t bytes) {
    check(bytes <= again.size() - replayed);
    std::memcpy(out, again.data() + replayed, bytes);
    replayed += bytes;
  };
  auto second = readRendezvousAnswer(replay, nranks, 0, "the re-encoded root");
  for (int r = 0; r < nranks; ++r) check(samePeer(second[r], peers[r]));
}

}  // namespace
}  // namespace hoop

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  switch (data[0] % 3) {
    case 0: hoop::fuzzRegistration(data + 1, size - 1); break;
    case 1: hoop::fuzzUniqueId(data + 1, size - 1); break;
    default: hoop::fuzzRendezvousAnswer(data + 1, size - 1); break;
  }
  return 0;
}
