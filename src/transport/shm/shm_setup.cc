#include "transport/shm/shm_setup.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <new>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "base/secret.h"
#include "base/wire.h"
#include "topology/memory_binding.h"
#include "transport/shm/cma.h"

namespace hoop {
namespace {

constexpr uint32_t kSetupMagic = 0x4d485348;  // "HSHM"
constexpr uint8_t kSetupVersion = 1;
constexpr uint32_t kMaxSetupMessage = 16 << 10;
constexpr size_t kMaxSlots = 4096;
constexpr size_t kMaxSlotBytes = size_t{1} << 30;

// What each side tells the other. The creator fills the segment fields; the joiner answers with
// canReadPeer (its CMA probe of the creator); the creator's verdict follows in a last message.
struct Hello {
  bool ok = true;
  std::string error;  // !ok: why this side could not go on
  std::string segmentName;
  uint64_t slots = 0;
  uint64_t slotBytes = 0;
  uint64_t segmentBytes = 0;
  uint32_t pid = 0;
  // The pid namespace (device, inode of /proc/self/ns/pid): a pid means the same process on
  // both sides only within one namespace (two containers sharing /dev/shm may differ).
  uint64_t pidNamespaceDevice = 0;
  uint64_t pidNamespaceInode = 0;
  // 16 random bytes at an address in this process: reading them back through process_vm_readv
  // proves both that CMA is allowed and that the pid is really this process.
  uint64_t probeAddress = 0;
  std::array<uint8_t, 16> probeValue{};
  bool useCma = false;
  uint64_t cmaThresholdBytes = 0;
  bool canReadPeer = false;
};

void sendFramed(SetupChannel& channel, const WireWriter& body) {
  WireWriter length;
  length.u32(static_cast<uint32_t>(body.bytes().size()));
  channel.send(length.bytes().data(), length.bytes().size());
  channel.send(body.bytes().data(), body.bytes().size());
}

std::vector<uint8_t> recvFramed(SetupChannel& channel) {
  uint8_t prefix[4];
  channel.recv(prefix, sizeof(prefix));
  uint32_t length = WireReader(prefix, sizeof(prefix), "shm setup message").u32();
  if (length > kMaxSetupMessage) {
    fail(hoopRemoteError, "shm setup message of ", length, " bytes (at most ", kMaxSetupMessage,
         ")");
  }
  std::vector<uint8_t> body(length);
  if (length > 0) channel.recv(body.data(), length);
  return body;
}

void sendHello(SetupChannel& channel, const Hello& hello) {
  WireWriter out;
  out.u32(kSetupMagic);
  out.u8(kSetupVersion);
  out.u8(hello.ok ? 1 : 0);
  out.u32(static_cast<uint32_t>(std::min<size_t>(hello.error.size(), 4096)));
  out.raw(hello.error.data(), std::min<size_t>(hello.error.size(), 4096));
  out.fixedString(hello.segmentName, 64);
  out.u64(hello.slots);
  out.u64(hello.slotBytes);
  out.u64(hello.segmentBytes);
  out.u32(hello.pid);
  out.u64(hello.pidNamespaceDevice);
  out.u64(hello.pidNamespaceInode);
  out.u64(hello.probeAddress);
  out.raw(hello.probeValue.data(), hello.probeValue.size());
  out.u8(hello.useCma ? 1 : 0);
  out.u64(hello.cmaThresholdBytes);
  out.u8(hello.canReadPeer ? 1 : 0);
  sendFramed(channel, out);
}

Hello recvHello(SetupChannel& channel) {
  std::vector<uint8_t> body = recvFramed(channel);
  WireReader in(body.data(), body.size(), "shm setup message");
  if (in.u32() != kSetupMagic || in.u8() != kSetupVersion) {
    fail(hoopRemoteError, "unexpected shm setup message (another hoop version?)");
  }
  Hello hello;
  hello.ok = in.u8() != 0;
  uint32_t errorBytes = in.u32();
  if (errorBytes > in.remaining()) fail(hoopRemoteError, "malformed shm setup message");
  hello.error.resize(errorBytes);
  in.raw(hello.error.data(), errorBytes);
  hello.segmentName = in.fixedString(64);
  hello.slots = in.u64();
  hello.slotBytes = in.u64();
  hello.segmentBytes = in.u64();
  hello.pid = in.u32();
  hello.pidNamespaceDevice = in.u64();
  hello.pidNamespaceInode = in.u64();
  hello.probeAddress = in.u64();
  in.raw(hello.probeValue.data(), hello.probeValue.size());
  hello.useCma = in.u8() != 0;
  hello.cmaThresholdBytes = in.u64();
  hello.canReadPeer = in.u8() != 0;
  return hello;
}

// Tells the peer why we stop, so it fails too instead of waiting on the channel. Best effort:
// the error we are about to throw matters more than a failure to report it.
void sendFailure(SetupChannel& channel, const std::string& why) {
  try {
    Hello failure;
    failure.ok = false;
    failure.error = why;
    sendHello(channel, failure);
  } catch (const Error&) {
  }
}

void describeSelf(Hello& hello, const ShmOptions& options, const Secret& probe) {
  hello.pid = static_cast<uint32_t>(getpid());
  struct stat info {};
  if (stat("/proc/self/ns/pid", &info) == 0) {
    hello.pidNamespaceDevice = info.st_dev;
    hello.pidNamespaceInode = info.st_ino;
  }
  hello.probeAddress = reinterpret_cast<uintptr_t>(probe.bytes.data());
  hello.probeValue = probe.bytes;
  hello.useCma = options.useCma;
  hello.cmaThresholdBytes = options.cmaThresholdBytes;
}

// 0 when this process could read the peer's probe bytes with process_vm_readv, else the errno
// (EIO: it read something else, so the pid is not the peer).
int probeCma(const Hello& peer) {
  std::array<uint8_t, 16> seen{};
  int error = cmaRead(static_cast<pid_t>(peer.pid), peer.probeAddress, seen.data(), seen.size());
  if (error == 0 && seen != peer.probeValue) error = EIO;
  return error;
}

void checkGeometry(size_t slots, size_t slotBytes) {
  if (slots < 1 || slots > kMaxSlots) {
    fail(hoopInvalidArgument, "shared-memory slots must be 1..", kMaxSlots, ", not ", slots,
         " (HOOP_SHM_SLOTS)");
  }
  if (slotBytes < kShmCacheLine || slotBytes > kMaxSlotBytes || slotBytes % kShmCacheLine != 0) {
    fail(hoopInvalidArgument, "shared-memory slot size must be a multiple of ", kShmCacheLine,
         " in ", kShmCacheLine, "..", kMaxSlotBytes, ", not ", slotBytes, " (HOOP_SHM_SLOT_SIZE)");
  }
}

std::string kibibytes(size_t bytes) {
  return bytes % 1024 == 0 ? str(bytes / 1024, " KiB") : str(bytes, " B");
}

}  // namespace

std::unique_ptr<ShmConnection> connectShm(int selfRank, int peerRank, std::string peerDescription,
                                          SetupChannel& channel, const ShmOptions& options) {
  if (selfRank == peerRank) {
    fail(hoopInvalidArgument, "rank ", selfRank, ": shared memory with itself");
  }
  const std::string context =
      str("rank ", selfRank, ": setting up shared memory with ", peerDescription, ": ");
  const int side = selfRank < peerRank ? 0 : 1;
  // The probe bytes must stay where they are until the peer has read them: it answers (joiner)
  // or confirms (creator) only after its probe, and we wait for that answer below.
  const Secret probe = Secret::random();
  Hello mine;
  describeSelf(mine, options, probe);

  ShmSegment segment;
  Hello theirs;
  size_t slots = 0;
  size_t slotBytes = 0;
  int readError = 0;  // our CMA probe of the peer
  bool peerCanReadUs = false;
  if (side == 0) {
    slots = options.slots;
    slotBytes = roundUpToLine(options.slotBytes);
    size_t bytes = 0;
    try {
      checkGeometry(slots, slotBytes);
      bytes = ShmLayout::segmentBytes(slots, slotBytes);
      size_t required =
          options.requiredFreeBytesForTesting != 0 ? options.requiredFreeBytesForTesting : bytes;
      segment = ShmSegment::create(bytes, options.shmDirectory, required);
      // Make the control block's objects exist here (the pages are zero, as every counter must
      // start); the joiner sees them through its own mapping once it has the name.
      ShmControlBlock* control = new (segment.data()) ShmControlBlock();
      control->header = {ShmSegmentHeader::kMagic, ShmSegmentHeader::kVersion,
                         static_cast<uint32_t>(slots), slotBytes, bytes};
    } catch (const Error& e) {
      sendFailure(channel, e.what());
      fail(e.code(), context, e.what());
    }
    mine.segmentName = segment.name();
    mine.slots = slots;
    mine.slotBytes = slotBytes;
    mine.segmentBytes = bytes;
    sendHello(channel, mine);
    theirs = recvHello(channel);
    if (!theirs.ok) fail(hoopRemoteError, context, peerDescription, " failed: ", theirs.error);
    // Both sides have it mapped: the name has done its job (DESIGN.md section 5).
    segment.unlink();
    readError = probeCma(theirs);
    WireWriter verdict;
    verdict.u8(readError == 0 ? 1 : 0);
    sendFramed(channel, verdict);
    peerCanReadUs = theirs.canReadPeer;
  } else {
    theirs = recvHello(channel);
    if (!theirs.ok) fail(hoopRemoteError, context, peerDescription, " failed: ", theirs.error);
    try {
      slots = theirs.slots;
      slotBytes = theirs.slotBytes;
      checkGeometry(slots, slotBytes);
      if (theirs.segmentBytes != ShmLayout::segmentBytes(slots, slotBytes) ||
          theirs.segmentName.rfind("/hoop-", 0) != 0) {
        fail(hoopRemoteError, "inconsistent segment description from the peer");
      }
      segment = ShmSegment::open(theirs.segmentName, theirs.segmentBytes);
      // Mapped here: the name has done its job for this side too. Unlinking it now, not only
      // when the creator hears back, closes the window in which the creator's death would leave
      // the segment in /dev/shm (the creator's own unlink then finds it gone, which is fine).
      shm_unlink(theirs.segmentName.c_str());
      const ShmSegmentHeader& header = ShmLayout(segment.data(), slots, slotBytes).control().header;
      if (header.magic != ShmSegmentHeader::kMagic ||
          header.version != ShmSegmentHeader::kVersion || header.slots != slots ||
          header.slotBytes != slotBytes || header.segmentBytes != theirs.segmentBytes) {
        fail(hoopRemoteError, "segment ", theirs.segmentName, " does not hold what was announced");
      }
    } catch (const Error& e) {
      sendFailure(channel, e.what());
      fail(e.code(), context, e.what());
    }
    readError = probeCma(theirs);
    mine.canReadPeer = readError == 0;
    sendHello(channel, mine);
    std::vector<uint8_t> verdict = recvFramed(channel);
    peerCanReadUs = WireReader(verdict.data(), verdict.size(), "shm setup verdict").u8() != 0;
  }

  if (options.numaNode >= 0) {
    // Before anything is written: pages take their node when first touched.
    const ShmLayout layout(segment.data(), slots, slotBytes);
    const std::string refused =
        preferNumaNode(layout.ringBase(1 - side), layout.ringBytes(), options.numaNode);
    log(LogLevel::kInfo, LogSubsys::kInit, selfRank, "shm with ", peerDescription,
        ": slots received here ",
        refused.empty() ? str("placed on NUMA node ", options.numaNode)
                        : str("left to the kernel (", refused, ")"));
  }

  ShmConnection::Setup setup;
  setup.slots = slots;
  setup.slotBytes = slotBytes;
  setup.side = side;
  setup.selfRank = selfRank;
  setup.peer = peerDescription;
  bool bothWantCma = mine.useCma && theirs.useCma;
  setup.sendViaCma = bothWantCma && peerCanReadUs;
  setup.sendCmaThresholdBytes = options.cmaThresholdBytes;
  setup.recvViaCma = bothWantCma && readError == 0;
  setup.peerCmaThresholdBytes = theirs.cmaThresholdBytes;
  setup.livenessInterval = options.livenessInterval;
  setup.spreadBytes = options.spreadBytes;
  // A pid is the peer's if we read our probe back through it, or if both share a pid namespace.
  bool samePidNamespace = mine.pidNamespaceInode != 0 &&
                          mine.pidNamespaceInode == theirs.pidNamespaceInode &&
                          mine.pidNamespaceDevice == theirs.pidNamespaceDevice;
  if (readError == 0 || samePidNamespace) {
    setup.peerProcess = PeerProcess(static_cast<pid_t>(theirs.pid));
  } else {
    log(LogLevel::kWarn, LogSubsys::kInit, selfRank, "shm with ", peerDescription,
        ": its process is in another pid namespace, so its death shows only as a timeout");
  }

  auto cmaText = [&](bool used, bool sending) -> std::string {
    size_t threshold = sending ? options.cmaThresholdBytes : theirs.cmaThresholdBytes;
    if (used) return "CMA (process_vm_readv) for messages >= " + kibibytes(threshold);
    if (!mine.useCma) return "slots only (CMA disabled here)";
    if (!theirs.useCma) return "slots only (CMA disabled by the peer)";
    if (sending) return "slots only (the peer may not read this process: process_vm_readv refused)";
    return "slots only (" + cmaRefusalHint(readError) + ")";
  };
  log(LogLevel::kInfo, LogSubsys::kInit, selfRank, "shm with ", peerDescription, ": ", slots,
      " slots x ", kibibytes(slotBytes), " per direction, ",
      options.spreadBytes == 0 ? std::string("each message at its slot's start")
                               : "messages spread across each slot's first " +
                                     kibibytes(std::min(options.spreadBytes, slotBytes)),
      "; sending: ", cmaText(setup.sendViaCma, true),
      "; receiving: ", cmaText(setup.recvViaCma, false));

  setup.segment = std::move(segment);
  return std::make_unique<ShmConnection>(std::move(setup));
}

}  // namespace hoop
