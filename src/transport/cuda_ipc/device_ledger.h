// What each side of a device connection has enqueued, kept in the pair's host segment next to
// the flags: the call every message belongs to, and how many each side posted.
//
// A host connection checks a message's tag when it arrives (connection.h's FrameTag). A device
// message carries nothing the host sees arrive: its flag flips on the device, long after the
// call returned. So the check moves to enqueue time. Each side writes the tag of every message
// it posts into its own ring here, then reads the other side's entry for the same message:
//
//   sender, message m:                        receiver, message m:
//     write  sent[m % ring]     = tag           write  expected[m % ring] = tag
//     fence  (seq_cst)                          fence  (seq_cst)
//     read   peer's expected[m % ring]          read   peer's sent[m % ring]
//
// With a full fence between each side's write and its read, at least one of the two sees the
// other's entry, so whichever posts second compares them; the first learns of a mismatch from
// the record the second leaves in the segment (DeviceWatch reads it). An entry holds its message
// number, written last with release after the tag, and a reader takes the tag only when the
// number is the one it wants both before and after reading it (a sequence lock): a side that ran
// a whole ring ahead has overwritten the entry, and that message goes unchecked rather than
// compared with the wrong one.
//
// The posted counts let a time-out name the side that never enqueued what the other waits for.
// Everything here is written by the host at enqueue time, never by a stream, so a captured
// graph's replays leave it as the capture wrote it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "transport/connection.h"

namespace hoop {

// Entries per ring: how far one side's enqueueing may run ahead of the other's and still be
// checked.
inline constexpr size_t kLedgerEntries = 256;

// A mismatch one side found, as the other reads it: the finder's call and the call it saw from
// the reader.
struct LedgerMismatch {
  std::string finderCall;
  std::string readerCall;
};

class DeviceLedger {
 public:
  // Bytes of the ledger at the end of the pair's segment (both sides and the mismatch record).
  static size_t bytes();
  // `area` is the ledger's start in the segment as this process maps it; `lower` says which
  // side this rank is (the lower rank of the pair).
  DeviceLedger(void* area, bool lower);

  // Records this side's message `number` in one direction and returns the other side's tag for
  // it when that one is known and differs.
  std::optional<FrameTag> recordSend(uint64_t number, const FrameTag& tag);
  std::optional<FrameTag> recordRecv(uint64_t number, const FrameTag& tag);

  // Leaves a mismatch this side found for the other to read (the first one found stays).
  void reportMismatch(const std::string& finderCall, const std::string& readerCall);
  // The mismatch the other side found, once it has left one.
  std::optional<LedgerMismatch> mismatchFromPeer() const;

  // Messages each side has posted, in each direction.
  uint64_t ownSendsPosted() const;
  uint64_t ownRecvsPosted() const;
  uint64_t peerSendsPosted() const;
  uint64_t peerRecvsPosted() const;

 private:
  struct Side;
  struct Mismatch;
  Side& own() const;
  Side& peer() const;
  Mismatch& mismatch() const;

  char* area_;
  bool lower_;
};

}  // namespace hoop
