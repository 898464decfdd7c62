// The memory block of one RDMA connection, registered once per rail, as both sides see it: the
// peer writes into its inbound ring, its clear-to-send entries and its probe word; this side
// writes from its outbound staging and CTS staging.
//
//   inbound ring     slots x (64-byte header + slotBytes)    the peer writes messages here
//   outbound ring    slots x (64-byte header + slotBytes)    staging for what we write there
//   inbound CTS      kCtsEntries x 64                        the peer's answers to our
//                                                            rendezvous announcements
//   outbound CTS     kCtsEntries x 64                        staging for our answers
//   probe            64 + 64                                 a word the peer writes to test the
//                                                            path, and the one we write from
//
// Position n of a ring lives in slot n % slots; every counter only grows (as in shm_layout.h).
// Both sides compute the peer's offsets from the peer's geometry, which the setup message
// carries. Headers and entries are host structs: hoop's hosts are little-endian.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace hoop {

static_assert(std::endian::native == std::endian::little,
              "the RDMA slot headers are written as little-endian host structs");

// The first 64 bytes of every slot; the data follows at once (64-byte aligned).
struct RdmaSlotHeader {
  static constexpr uint16_t kMagic = 0x5248;  // "HR"
  static constexpr uint8_t kVersion = 1;
  // Flag: an announcement of a rendezvous message (no data here): the receiver answers with a
  // clear-to-send entry, then the data is written straight into its buffer.
  static constexpr uint8_t kAnnounce = 1;

  uint16_t magic;
  uint8_t version;
  uint8_t kind;  // OpKind
  uint8_t flags;
  uint8_t callType;  // the call's CallParams, checked on a message's first fragment
  uint8_t callOp;
  uint8_t reserved;
  uint32_t seq;
  uint32_t callRoot;
  uint64_t position;  // ring position: a stale or misplaced slot shows here
  uint64_t messageBytes;
  uint64_t fragmentOffset;
  uint64_t fragmentBytes;
  uint64_t callCount;
  uint64_t ticket;  // the sender's ticket of the message (named by a clear-to-send)
};
static_assert(sizeof(RdmaSlotHeader) == 64);

inline constexpr size_t kRdmaRailKeys = 4;

// The receiver's answer to an announcement: where the data goes, or that it streams through
// the slots after all (accepted 0: the receive buffer is not registered).
struct RdmaClearToSend {
  uint64_t ticket;  // + 1: 0 marks an entry never written
  uint64_t address;
  uint64_t bytes;
  uint32_t accepted;
  uint32_t rails;
  uint32_t keys[kRdmaRailKeys];  // the buffer's rkey on each of the receiver's rails
  uint64_t reserved;
};
static_assert(sizeof(RdmaClearToSend) <= 64);

class RdmaLayout {
 public:
  static constexpr size_t kHeaderBytes = 64;
  static constexpr size_t kCtsEntries = 16;
  static constexpr size_t kEntryBytes = 64;
  static constexpr size_t kPageBytes = 4096;

  RdmaLayout() = default;
  RdmaLayout(size_t slots, size_t slotBytes) : slots_(slots), slotBytes_(slotBytes) {}

  size_t slots() const { return slots_; }
  size_t slotBytes() const { return slotBytes_; }
  size_t slotStride() const { return kHeaderBytes + slotBytes_; }

  // Offsets from the block's start, of a slot's header (its data follows at + kHeaderBytes).
  size_t inboundSlot(uint64_t position) const { return slotOffset(0, position); }
  size_t outboundSlot(uint64_t position) const { return slotOffset(1, position); }
  size_t inboundCts(uint64_t ticket) const { return ctsOffset(0, ticket); }
  size_t outboundCts(uint64_t ticket) const { return ctsOffset(1, ticket); }
  size_t probeTarget() const { return ctsOffset(2, 0); }
  size_t probeSource() const { return probeTarget() + kEntryBytes; }
  // The whole block, rounded up to pages (it is registered and mapped whole).
  size_t totalBytes() const {
    const size_t bytes = probeSource() + kEntryBytes;
    return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  }

 private:
  size_t slotOffset(int ring, uint64_t position) const {
    return (static_cast<size_t>(ring) * slots_ + static_cast<size_t>(position % slots_)) *
           slotStride();
  }
  size_t ctsOffset(int table, uint64_t ticket) const {
    return 2 * slots_ * slotStride() +
           (static_cast<size_t>(table) * kCtsEntries + static_cast<size_t>(ticket % kCtsEntries)) *
               kEntryBytes;
  }

  size_t slots_ = 0;
  size_t slotBytes_ = 0;
};

}  // namespace hoop
