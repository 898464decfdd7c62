// The shared-memory segment of one ShmConnection as both processes see it: a control block of
// counters, one ring of slots per direction, then two eager buffers per direction.
//
// Every shared field has exactly one writing process, named in its comment. Counters only
// increase (a slot is never "cleared"): ring position n lives in slot n % slots, and
//   sender may fill position n     when n < released (by the receiver) + slots
//   receiver may read position n   when n < published (by the sender).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace hoop {

inline constexpr size_t kShmCacheLine = 64;
constexpr size_t roundUpToLine(size_t bytes) {
  return (bytes + kShmCacheLine - 1) / kShmCacheLine * kShmCacheLine;
}
// Counters written by different processes sit 128 bytes apart rather than 64: x86's adjacent-line
// prefetcher fetches cache lines in 128-byte pairs, so neighbours 64 bytes apart would still
// bounce between the two cores on every write (false sharing). Sender-owned and receiver-owned
// counters therefore never share a line, nor a prefetch pair.
inline constexpr size_t kShmCounterSpacing = 128;

// The segment is mapped by two processes, so its atomics must work across address spaces:
// lock-free atomics are plain memory operations, a lock-based fallback would not be.
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);
// futex(2) operates on a plain 32-bit word; std::atomic<uint32_t> must be exactly that.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

template <typename T>
struct alignas(kShmCounterSpacing) ShmCounter {
  std::atomic<T> value;
};

// One side's control words. Side 0 is the process that created the segment (the lower rank).
struct ShmSideControl {
  // Positions this side has published into its outbound ring. Written by this side with a
  // release store after the slot's header and data; the peer acquire-loads it before reading.
  ShmCounter<uint64_t> published;
  // Positions this side has finished with in its inbound ring. Written by this side with a
  // release store after its last read of the slot (copy-out or process_vm_readv done); the peer
  // acquire-loads it before overwriting the slot or reusing a CMA send buffer.
  ShmCounter<uint64_t> released;
  // Times this side announced it is about to sleep on `wake`, the announcement its last sleep
  // has ended (equal to sleepRequests while it is awake), and whether its ShmConnection is gone
  // (0 then 1); all written by this side only. They are rarely written, so the peer's frequent
  // reads of them hit a shared, clean line.
  struct alignas(kShmCounterSpacing) {
    std::atomic<uint32_t> sleepRequests;
    std::atomic<uint32_t> sleepsEnded;
    std::atomic<uint32_t> closed;
  } state;
  // This side's futex word. Written by the PEER: incremented after each publish into this side's
  // inbound ring and each release in its outbound ring, and FUTEX_WAKEd when this side asked.
  ShmCounter<uint32_t> wake;
  // Eager messages this side has finished reading (release store after its last read). The
  // sender reads it only when the count its own inbound eager messages carry is not enough.
  ShmCounter<uint64_t> eagerConsumed;
};

// The first line of an eager buffer: a small message's whole description, published by
// `number`. The plain fields are written first, then `number` with a release store; the reader
// acquire-loads `number` and reads the rest only once it shows the message it expects.
struct ShmEagerDescriptor {
  std::atomic<uint64_t> number;  // the message now in this buffer: 1, 2, ... (only increases)
  uint64_t consumed;             // the writer's count of eager messages read from the reader
  uint64_t count;                // elements
  uint64_t bytes;
  uint32_t seq;
  uint8_t kind;  // OpKind
  uint8_t type;  // DataType
  uint8_t op;    // RedOp
  uint8_t reserved;
};
static_assert(sizeof(ShmEagerDescriptor) <= 64);

struct ShmSegmentHeader {
  static constexpr uint64_t kMagic = 0x314d48535f504f48ull;  // "HOP_SHM1", little-endian
  static constexpr uint32_t kVersion = 3;
  uint64_t magic;
  uint32_t version;
  uint32_t slots;
  uint64_t slotBytes;
  uint64_t segmentBytes;
};

struct ShmControlBlock {
  alignas(kShmCounterSpacing) ShmSegmentHeader header;  // written once by the creator
  ShmSideControl sides[2];
};

// The first cache line of every slot; the data area follows at the next line. A fragment's bytes
// start dataOffset bytes into the data area (a whole number of lines), so that a slot's
// successive small messages land on different cache lines (ShmConnection::placeInSlot).
struct ShmSlotHeader {
  static constexpr uint16_t kMagic = 0x5348;  // "HS"
  static constexpr uint8_t kVersion = 3;
  // Flag: the slot carries no bytes, only where they are in the sender (CMA, process_vm_readv).
  static constexpr uint8_t kViaCma = 1;

  uint16_t magic;
  uint8_t version;
  uint8_t kind;  // OpKind
  uint8_t flags;
  uint8_t callType;  // the call's CallParams, checked on a message's first fragment
  uint8_t callOp;
  uint8_t reserved;
  uint32_t seq;
  uint32_t callRoot;
  uint64_t position;  // ring position it was published as: a stale or foreign slot shows here
  uint64_t messageBytes;
  uint64_t fragmentOffset;
  uint64_t fragmentBytes;
  union {
    uint64_t cmaAddress;  // kViaCma: the message's address in the sender
    uint64_t dataOffset;  // otherwise: where the fragment's bytes start in the slot's data area
  };
  uint64_t callCount;
};
static_assert(sizeof(ShmSlotHeader) <= kShmCacheLine);

// Where everything is, given the segment's base address and geometry.
class ShmLayout {
 public:
  ShmLayout() = default;
  ShmLayout(void* base, size_t slots, size_t slotBytes)
      : base_(static_cast<uint8_t*>(base)), slots_(slots), slotBytes_(slotBytes) {}

  static constexpr size_t slotStride(size_t slotBytes) { return kShmCacheLine + slotBytes; }
  static constexpr size_t ringsOffset() { return roundUpToLine(sizeof(ShmControlBlock)); }
  // slotBytes must be a multiple of kShmCacheLine so that every slot's data stays aligned.
  static constexpr size_t segmentBytes(size_t slots, size_t slotBytes) {
    return ringsOffset() + 2 * slots * slotStride(slotBytes) + 4 * kEagerStride;
  }

  // Eager buffers: a descriptor line, then up to kEagerBytes of data. Two per direction, used in
  // turn (message n in buffer n % 2), so a writer fills one while the reader may still be
  // reading the other.
  static constexpr size_t kEagerBytes = 8192;
  static constexpr size_t kEagerStride = kShmCacheLine + kEagerBytes;
  ShmEagerDescriptor& eagerDescriptor(int sender, uint64_t number) const {
    return *reinterpret_cast<ShmEagerDescriptor*>(eagerBuffer(sender, number));
  }
  uint8_t* eagerData(int sender, uint64_t number) const {
    return eagerBuffer(sender, number) + kShmCacheLine;
  }

  ShmControlBlock& control() const { return *reinterpret_cast<ShmControlBlock*>(base_); }
  ShmSideControl& side(int s) const { return control().sides[s]; }

  // Ring `sender` carries messages from side `sender` to the other side.
  ShmSlotHeader* header(int sender, uint64_t position) const {
    return reinterpret_cast<ShmSlotHeader*>(slot(sender, position));
  }
  uint8_t* data(int sender, uint64_t position) const {
    return slot(sender, position) + kShmCacheLine;
  }

  // The whole ring of slots that side `sender` writes, headers included: what NUMA placement
  // binds for its reader.
  uint8_t* ringBase(int sender) const { return slot(sender, 0); }
  size_t ringBytes() const { return slots_ * slotStride(slotBytes_); }

  size_t slots() const { return slots_; }
  size_t slotBytes() const { return slotBytes_; }

 private:
  uint8_t* eagerBuffer(int sender, uint64_t number) const {
    size_t eager = ringsOffset() + 2 * slots_ * slotStride(slotBytes_);
    return base_ + eager + (static_cast<size_t>(sender) * 2 + number % 2) * kEagerStride;
  }
  uint8_t* slot(int sender, uint64_t position) const {
    size_t ring = ringsOffset() + static_cast<size_t>(sender) * slots_ * slotStride(slotBytes_);
    return base_ + ring + static_cast<size_t>(position % slots_) * slotStride(slotBytes_);
  }

  uint8_t* base_ = nullptr;
  size_t slots_ = 0;
  size_t slotBytes_ = 0;
};

}  // namespace hoop
