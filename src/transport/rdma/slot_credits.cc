#include "transport/rdma/slot_credits.h"

#include <algorithm>

namespace hoop {

uint32_t packImm(ImmKind kind, uint64_t value) {
  return static_cast<uint32_t>(kind) << kImmValueBits |
         (static_cast<uint32_t>(value) & kImmValueMask);
}

std::optional<Imm> unpackImm(uint32_t imm) {
  const uint32_t kind = imm >> kImmValueBits;
  if (kind < static_cast<uint32_t>(ImmKind::kSlot) ||
      kind > static_cast<uint32_t>(ImmKind::kPart)) {
    return std::nullopt;
  }
  return Imm{static_cast<ImmKind>(kind), imm & kImmValueMask};
}

uint64_t widenCounter(uint32_t value, uint64_t from) {
  const uint64_t ahead = (value - static_cast<uint32_t>(from)) & kImmValueMask;
  return from + ahead;
}

bool OutboundSlots::credit(uint32_t value) {
  const uint64_t released = widenCounter(value, released_);
  if (released > published_) return false;
  released_ = released;
  return true;
}

InboundSlots::InboundSlots(size_t slots, uint64_t start)
    : slots_(slots),
      creditBatch_(std::max<size_t>(1, slots / 4)),
      head_(start),
      credited_(start),
      arrived_(slots, 0) {}

bool InboundSlots::arrive(uint32_t value) {
  const uint64_t position = widenCounter(value, head_);
  if (position >= head_ + slots_) return false;
  uint64_t& mark = arrived_[position % slots_];
  if (mark == position + 1) return false;
  mark = position + 1;
  return true;
}

void InboundSlots::release() {
  arrived_[head_ % slots_] = 0;
  ++head_;
}

bool InboundSlots::creditDue() const {
  if (head_ == credited_) return false;
  return head_ - credited_ >= creditBatch_ || !headArrived();
}

uint64_t InboundSlots::takeCredit() {
  credited_ = head_;
  return credited_;
}

}  // namespace hoop
