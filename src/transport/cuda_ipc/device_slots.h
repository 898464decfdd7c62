// The handshake of a device connection, one flag per slot: what the two sides write and wait
// for, and where the flags live.
//
// Each direction of a pair has a ring of slots in the receiver's device memory, which the sender
// maps (CUDA IPC), and one flag per slot in a host shared-memory segment both processes map and
// make addressable by their device (DeviceRuntime::mapHost). Every write and wait is an operation
// on the rank's stream, enqueued when the collective is called; nothing runs on the host:
//
//   sender, message m (slot m % slots):     receiver, message m:
//     wait   flag & (kEmpty | kAborted)       wait   flag & (kFull | kAborted)
//     copy   data -> peer's slot              use    the slot (copy out, or reduce from it)
//     write  flag = kFull                     write  flag = kEmpty
//
// The flag alternates strictly between kEmpty and kFull, each side writing only the state the
// other waits for, so one word serves both sides without a counter. The values written are
// constants, not sequence numbers: a captured graph replays the same operations and the
// handshake still holds, as long as both ranks replay the same calls in the same order (which
// they must for any collective).
//
// Memory ordering: the sender's flag write follows its copy on one stream, and a stream's flag
// write is fenced system-wide after everything before it (DeviceRuntime::writeFlag), so the data
// is in the peer's slot before kFull is; the receiver's reads are ordered after its wait on the
// same stream. kEmpty is written only after the receiver's last read of the slot, so the sender
// never overwrites data still being read.
//
// Release on abort: the host writes kAborted | kEmpty | kFull to every flag, which satisfies any
// wait; as a stream's later writes would clear it, the poisoning is repeated until the streams
// have drained (core/device_watch.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hoop {

inline constexpr uint32_t kSlotEmpty = 1;
inline constexpr uint32_t kSlotFull = 2;
inline constexpr uint32_t kSlotAborted = 4;
inline constexpr uint32_t kSlotReleased = kSlotEmpty | kSlotFull | kSlotAborted;

// One flag per 64-byte line: the two processes (and on CUDA the GPU's front end) write flags of
// neighbouring slots at the same time.
inline constexpr size_t kFlagStride = 64;

// The flags of one direction of a pair: `slots` lines.
inline constexpr size_t flagBytesPerDirection(size_t slots) { return slots * kFlagStride; }

}  // namespace hoop
