#include "transport/cuda_ipc/device_ledger.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace hoop {
namespace {

// One message's tag. Every field is read and written through atomic_ref: the other process may
// rewrite the entry while this one reads it, and the sequence lock (the number) tells a torn read
// from a whole one.
struct LedgerEntry {
  uint64_t number;  // the message's number + 1; 0 while empty or being rewritten
  uint64_t count;
  uint32_t seq;
  uint32_t root;
  uint8_t kind;
  uint8_t type;
  uint8_t op;
  uint8_t unused[5];
};
static_assert(sizeof(LedgerEntry) == 32);

// Room for two describeCall() texts, cut where longer.
constexpr size_t kCallTextBytes = 192;

template <typename T>
T loadRelaxed(T& field) {
  return std::atomic_ref<T>(field).load(std::memory_order_relaxed);
}

template <typename T>
void storeRelaxed(T& field, T value) {
  std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

void writeEntry(LedgerEntry& entry, uint64_t number, const FrameTag& tag) {
  storeRelaxed<uint64_t>(entry.number, 0);
  std::atomic_thread_fence(std::memory_order_release);
  storeRelaxed<uint64_t>(entry.count, tag.call.count);
  storeRelaxed<uint32_t>(entry.seq, tag.seq);
  storeRelaxed<uint32_t>(entry.root, tag.call.root);
  storeRelaxed<uint8_t>(entry.kind, static_cast<uint8_t>(tag.kind));
  storeRelaxed<uint8_t>(entry.type, tag.call.type);
  storeRelaxed<uint8_t>(entry.op, tag.call.op);
  std::atomic_ref<uint64_t>(entry.number).store(number + 1, std::memory_order_release);
}

// The entry's tag when it holds message `number`, read whole.
std::optional<FrameTag> readEntry(LedgerEntry& entry, uint64_t number) {
  if (std::atomic_ref<uint64_t>(entry.number).load(std::memory_order_acquire) != number + 1) {
    return std::nullopt;
  }
  FrameTag tag{static_cast<OpKind>(loadRelaxed(entry.kind)), loadRelaxed(entry.seq),
               CallParams{loadRelaxed(entry.count), loadRelaxed(entry.type), loadRelaxed(entry.op),
                          loadRelaxed(entry.root)}};
  std::atomic_thread_fence(std::memory_order_acquire);
  if (loadRelaxed(entry.number) != number + 1) return std::nullopt;
  return tag;
}

bool sameTag(const FrameTag& a, const FrameTag& b) {
  return a.kind == b.kind && a.seq == b.seq && a.call == b.call;
}

void copyText(char (&to)[kCallTextBytes], const std::string& text) {
  const size_t bytes = std::min(text.size(), kCallTextBytes - 1);
  std::memcpy(to, text.data(), bytes);
  to[bytes] = '\0';
}

// The record's states.
constexpr uint32_t kNoMismatch = 0;
constexpr uint32_t kMismatchBeingWritten = 1;
constexpr uint32_t kMismatchWritten = 2;

}  // namespace

// What one side posted. The counts sit on a line of their own: the owner bumps them on every
// message while the other side reads them only when it times out.
struct DeviceLedger::Side {
  alignas(64) uint64_t sendsPosted;
  uint64_t recvsPosted;
  alignas(64) LedgerEntry sent[kLedgerEntries];
  LedgerEntry expected[kLedgerEntries];
};

struct DeviceLedger::Mismatch {
  alignas(64) uint32_t state;
  uint32_t finderIsLower;  // which side found it
  char finderCall[kCallTextBytes];
  char readerCall[kCallTextBytes];
};

size_t DeviceLedger::bytes() { return 2 * sizeof(Side) + sizeof(Mismatch); }

DeviceLedger::DeviceLedger(void* area, bool lower)
    : area_(static_cast<char*>(area)), lower_(lower) {}

DeviceLedger::Side& DeviceLedger::own() const {
  return *reinterpret_cast<Side*>(area_ + (lower_ ? 0 : sizeof(Side)));
}

DeviceLedger::Side& DeviceLedger::peer() const {
  return *reinterpret_cast<Side*>(area_ + (lower_ ? sizeof(Side) : 0));
}

DeviceLedger::Mismatch& DeviceLedger::mismatch() const {
  return *reinterpret_cast<Mismatch*>(area_ + 2 * sizeof(Side));
}

std::optional<FrameTag> DeviceLedger::recordSend(uint64_t number, const FrameTag& tag) {
  writeEntry(own().sent[number % kLedgerEntries], number, tag);
  std::atomic_ref<uint64_t>(own().sendsPosted).store(number + 1, std::memory_order_relaxed);
  // Orders this side's write before its read of the other's, as the other side does too.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::optional<FrameTag> theirs = readEntry(peer().expected[number % kLedgerEntries], number);
  if (theirs && !sameTag(*theirs, tag)) return theirs;
  return std::nullopt;
}

std::optional<FrameTag> DeviceLedger::recordRecv(uint64_t number, const FrameTag& tag) {
  writeEntry(own().expected[number % kLedgerEntries], number, tag);
  std::atomic_ref<uint64_t>(own().recvsPosted).store(number + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::optional<FrameTag> theirs = readEntry(peer().sent[number % kLedgerEntries], number);
  if (theirs && !sameTag(*theirs, tag)) return theirs;
  return std::nullopt;
}

void DeviceLedger::reportMismatch(const std::string& finderCall, const std::string& readerCall) {
  Mismatch& record = mismatch();
  uint32_t expected = kNoMismatch;
  if (!std::atomic_ref<uint32_t>(record.state)
           .compare_exchange_strong(expected, kMismatchBeingWritten, std::memory_order_acq_rel)) {
    return;
  }
  record.finderIsLower = lower_ ? 1 : 0;
  copyText(record.finderCall, finderCall);
  copyText(record.readerCall, readerCall);
  std::atomic_ref<uint32_t>(record.state).store(kMismatchWritten, std::memory_order_release);
}

std::optional<LedgerMismatch> DeviceLedger::mismatchFromPeer() const {
  Mismatch& record = mismatch();
  if (std::atomic_ref<uint32_t>(record.state).load(std::memory_order_acquire) != kMismatchWritten) {
    return std::nullopt;
  }
  // Written once, before the state: stable from here on. The finder knows its own mismatch
  // already (it failed its call with it).
  if ((record.finderIsLower != 0) == lower_) return std::nullopt;
  return LedgerMismatch{std::string(record.finderCall), std::string(record.readerCall)};
}

uint64_t DeviceLedger::ownSendsPosted() const {
  return std::atomic_ref<uint64_t>(own().sendsPosted).load(std::memory_order_relaxed);
}
uint64_t DeviceLedger::ownRecvsPosted() const {
  return std::atomic_ref<uint64_t>(own().recvsPosted).load(std::memory_order_relaxed);
}
uint64_t DeviceLedger::peerSendsPosted() const {
  return std::atomic_ref<uint64_t>(peer().sendsPosted).load(std::memory_order_relaxed);
}
uint64_t DeviceLedger::peerRecvsPosted() const {
  return std::atomic_ref<uint64_t>(peer().recvsPosted).load(std::memory_order_relaxed);
}

}  // namespace hoop
