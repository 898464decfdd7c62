#include "transport/cuda_ipc/device_setup.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/wire.h"
#include "transport/cuda_ipc/device_ledger.h"
#include "transport/cuda_ipc/device_slots.h"

namespace hoop {
namespace {

constexpr uint32_t kDeviceSetupMagic = 0x56444848;  // "HHDV"
constexpr uint8_t kDeviceSetupVersion = 1;
constexpr uint32_t kMaxSetupMessage = 8 << 10;
constexpr size_t kMaxErrorBytes = 4096;
constexpr size_t kSegmentNameBytes = 64;

struct DeviceHello {
  bool ok = true;
  std::string error;
  std::string segmentName;  // the lower rank's
  uint64_t slots = 0;
  uint64_t slotBytes = 0;
  DeviceIpcHandle ring{};  // the sender's receive ring, exported
};

void sendHello(SetupChannel& channel, const DeviceHello& hello) {
  WireWriter body;
  body.u32(kDeviceSetupMagic);
  body.u8(kDeviceSetupVersion);
  body.u8(hello.ok ? 1 : 0);
  const size_t errorBytes = std::min(hello.error.size(), kMaxErrorBytes);
  body.u32(static_cast<uint32_t>(errorBytes));
  body.raw(hello.error.data(), errorBytes);
  body.fixedString(hello.segmentName, kSegmentNameBytes);
  body.u64(hello.slots);
  body.u64(hello.slotBytes);
  body.raw(hello.ring.data(), hello.ring.size());
  WireWriter length;
  length.u32(static_cast<uint32_t>(body.bytes().size()));
  channel.send(length.bytes().data(), length.bytes().size());
  channel.send(body.bytes().data(), body.bytes().size());
}

DeviceHello recvHello(SetupChannel& channel, const std::string& peerName) {
  uint8_t prefix[4];
  channel.recv(prefix, sizeof(prefix));
  const uint32_t length = WireReader(prefix, sizeof(prefix), "device setup message").u32();
  if (length > kMaxSetupMessage) {
    fail(hoopRemoteError, "device connection setup with ", peerName, ": a message of ", length,
         " bytes (at most ", kMaxSetupMessage, ")");
  }
  std::vector<uint8_t> body(length);
  if (length > 0) channel.recv(body.data(), length);
  WireReader in(body.data(), body.size(), "device setup message");
  if (in.u32() != kDeviceSetupMagic || in.u8() != kDeviceSetupVersion) {
    fail(hoopRemoteError, "device connection setup with ", peerName,
         ": an unexpected message (another hoop version?)");
  }
  DeviceHello hello;
  hello.ok = in.u8() != 0;
  const uint32_t errorBytes = in.u32();
  if (errorBytes > in.remaining()) {
    fail(hoopRemoteError, "device connection setup with ", peerName, ": a malformed message");
  }
  hello.error.resize(errorBytes);
  in.raw(hello.error.data(), errorBytes);
  hello.segmentName = in.fixedString(kSegmentNameBytes);
  hello.slots = in.u64();
  hello.slotBytes = in.u64();
  in.raw(hello.ring.data(), hello.ring.size());
  if (!hello.ok) {
    fail(hoopRemoteError, peerName,
         " could not set up its device connection to this rank: ", hello.error);
  }
  return hello;
}

// Tells the peer why this side stops. Best effort: the error about to be thrown matters more.
void sendFailure(SetupChannel& channel, const std::string& why) {
  try {
    DeviceHello failure;
    failure.ok = false;
    failure.error = why;
    sendHello(channel, failure);
  } catch (const Error&) {
  }
}

// Both directions' flags, then the pair's ledger (device_ledger.h).
size_t ledgerOffset(size_t slots) { return 2 * flagBytesPerDirection(slots); }

size_t flagSegmentBytes(size_t slots) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = ledgerOffset(slots) + DeviceLedger::bytes();
  return (bytes + page - 1) / page * page;
}

void markEveryFlagEmpty(const ShmSegment& flags, size_t slots) {
  auto* words = static_cast<uint32_t*>(flags.data());
  for (size_t i = 0; i < ledgerOffset(slots) / sizeof(uint32_t); ++i) {
    std::atomic_ref<uint32_t>(words[i]).store(kSlotEmpty, std::memory_order_relaxed);
  }
}

}  // namespace

std::unique_ptr<DeviceConnection> connectDevice(const PeerPair& pair, SetupChannel& channel,
                                                DeviceSlotShape shape, DeviceCallQueue& queue) {
  DeviceRuntime& runtime = queue.runtime();
  const bool lower = pair.self < pair.peer;
  auto resources = std::make_unique<DeviceConnectionResources>();
  resources->runtime = &runtime;
  const size_t flagBytes = flagBytesPerDirection(shape.slots);
  // The lower rank's direction (lower to higher) comes first in the segment.
  resources->outboundFlagsOffset = lower ? 0 : flagBytes;
  resources->inboundFlagsOffset = lower ? flagBytes : 0;
  resources->ledgerOffset = ledgerOffset(shape.slots);
  resources->lower = lower;
  DeviceHello mine;
  mine.slots = shape.slots;
  mine.slotBytes = shape.slotBytes;
  try {
    resources->ownSlots = static_cast<char*>(runtime.allocate(shape.slots * shape.slotBytes));
    mine.ring = runtime.exportMemory(resources->ownSlots);
    if (lower) {
      resources->flags = ShmSegment::create(flagSegmentBytes(shape.slots), "/dev/shm", 0);
      markEveryFlagEmpty(resources->flags, shape.slots);
      mine.segmentName = resources->flags.name();
    }
  } catch (const Error& e) {
    sendFailure(channel, e.what());
    throw;
  }

  auto adoptPeer = [&](const DeviceHello& theirs) {
    if (theirs.slots != shape.slots || theirs.slotBytes != shape.slotBytes) {
      fail(hoopInvalidUsage, "device connection setup with ", pair.peerName, ": it has ",
           theirs.slots, " slots of ", theirs.slotBytes, " bytes, this rank ", shape.slots, " of ",
           shape.slotBytes, " (the settings differ between the ranks)");
    }
    resources->peerSlots =
        static_cast<char*>(runtime.importMemory(theirs.ring, shape.slots * shape.slotBytes));
  };
  auto mapFlags = [&] {
    resources->flagsOnDevice = runtime.mapHost(resources->flags.data(), resources->flags.size());
  };

  if (lower) {
    sendHello(channel, mine);
    const DeviceHello theirs = recvHello(channel, pair.peerName);
    try {
      adoptPeer(theirs);
      mapFlags();
      resources->flags.unlink();
    } catch (const Error& e) {
      sendFailure(channel, e.what());
      throw;
    }
    sendHello(channel, DeviceHello{});
  } else {
    const DeviceHello theirs = recvHello(channel, pair.peerName);
    try {
      resources->flags = ShmSegment::open(theirs.segmentName, flagSegmentBytes(shape.slots));
      adoptPeer(theirs);
      mapFlags();
    } catch (const Error& e) {
      sendFailure(channel, e.what());
      throw;
    }
    sendHello(channel, mine);
    recvHello(channel, pair.peerName);
  }
  return std::make_unique<DeviceConnection>(queue, pair.self, pair.peer, shape,
                                            std::move(resources), pair.peerName);
}

}  // namespace hoop
