// The bookkeeping of an RDMA slot ring, apart from verbs so that it is tested on its own.
//
// The sender writes position n of the receiver's ring (slot n % slots) with RDMA WRITE WITH
// IMMEDIATE; the immediate names the kind of event and the position. The receiver consumes
// positions in order and returns credits: "I have released this many positions", sent as the
// immediate of a zero-length SEND. The sender may write position n once n < released + slots.
// Immediates carry 28 bits of a counter; the full value is recovered from the receiver's or
// sender's own count, which is never more than a ring behind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace hoop {

enum class ImmKind : uint8_t {
  kSlot = 1,         // a slot was written: value = its position
  kCredit = 2,       // value = positions the receiver released
  kClearToSend = 3,  // a clear-to-send entry was written: value = the message's ticket
  kPart = 4,         // one queue pair's part of a rendezvous message landed: value = ticket
};

inline constexpr unsigned kImmValueBits = 28;
inline constexpr uint32_t kImmValueMask = (1u << kImmValueBits) - 1;

struct Imm {
  ImmKind kind;
  uint32_t value;
};

uint32_t packImm(ImmKind kind, uint64_t value);
// nullopt for a kind this version does not know.
std::optional<Imm> unpackImm(uint32_t imm);
// The counter whose low 28 bits are `value`, at or after `from` and less than 2^28 past it.
uint64_t widenCounter(uint32_t value, uint64_t from);

// The sender's account of the peer's inbound ring.
class OutboundSlots {
 public:
  // `start`: the count both sides begin at (0; tests of long jobs start near a wrap).
  explicit OutboundSlots(size_t slots, uint64_t start = 0)
      : slots_(slots), published_(start), released_(start) {}

  bool hasRoom() const { return published_ - released_ < slots_; }
  uint64_t next() const { return published_; }
  void publish() { ++published_; }
  // A credit: the receiver has released `value` (28 bits) positions. False when that cannot be
  // (more than were published): the message is garbage. A credit that says nothing new is fine.
  bool credit(uint32_t value);

  uint64_t published() const { return published_; }
  uint64_t released() const { return released_; }
  size_t slots() const { return slots_; }

 private:
  size_t slots_;
  uint64_t published_ = 0;
  uint64_t released_ = 0;
};

// The receiver's account of its own inbound ring: which positions have arrived (they may arrive
// out of order when several queue pairs carry them), which it consumed, and the credits owed.
class InboundSlots {
 public:
  explicit InboundSlots(size_t slots, uint64_t start = 0);

  // A slot arrived at position `value` (28 bits). False when that position cannot be written now
  // (outside [head, head + slots), or already there): the message is garbage.
  bool arrive(uint32_t value);
  bool headArrived() const { return arrived_[head_ % slots_] == head_ + 1; }
  uint64_t head() const { return head_; }
  // The head position was read and may be written again.
  void release();

  // Whether to send a credit now: positions were released since the last one, and either a
  // batch of them is due or nothing more has arrived (the sender may be waiting for room).
  bool creditDue() const;
  // The released count to send; it is then no longer owed.
  uint64_t takeCredit();

 private:
  size_t slots_;
  size_t creditBatch_;
  uint64_t head_ = 0;
  uint64_t credited_ = 0;
  // Per slot, the position that arrived there plus one (0: none yet).
  std::vector<uint64_t> arrived_;
};

}  // namespace hoop
