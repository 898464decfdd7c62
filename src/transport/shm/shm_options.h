// Knobs of the shared-memory transport. The communicator fills them from its config
// (HOOP_SHM_SLOTS, HOOP_SHM_SLOT_SIZE, ...); the defaults suit a ring allreduce on one host.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace hoop {

struct ShmOptions {
  // Slots per direction and bytes per slot. A message larger than a slot spans several; a full
  // ring makes the sender wait for the receiver, so slots * slotBytes is the pipeline depth.
  // The segment holds both directions: about 2 * slots * slotBytes bytes of /dev/shm.
  size_t slots = 8;
  size_t slotBytes = 512 << 10;  // rounded up to a multiple of 64

  // How far into its slot a message may start. Within this many bytes of a slot's data area,
  // each message starts where that slot's previous one ended, so a slot's small messages come
  // back to the same cache lines only after slots * spreadBytes bytes went by; 0 puts every
  // message at the slot's start. Rewriting lines that the reading core still holds costs a
  // cross-core invalidation per line, about twice the exchange's time where each rank has a core.
  // Where ranks share cores the reader is often this core, whose cache the start still sits in,
  // and spreading is slower instead (docs/design-notes.md, "Measurements behind the defaults"). The
  // communicator picks it (HOOP_SHM_SPREAD overrides): the whole slot split among the local
  // peers when every local rank has a core, else 0.
  size_t spreadBytes = 0;
  bool spreadSetByUser = false;

  // Messages of at least this many bytes skip the slots: the receiver reads them straight out of
  // the sender's buffer with process_vm_readv (one copy instead of two), when the kernel allows it.
  // The default sits above the default piece size (512 KiB): a ring step that reduces straight
  // out of the peer's slot beats reading the piece by CMA and reducing it afterwards
  // (docs/design-notes.md), so collectives keep to the slots and only large point-to-point
  // messages or a large HOOP_CHUNK_SIZE take the single copy.
  bool useCma = true;
  size_t cmaThresholdBytes = 4 << 20;

  // How long progress() may see nothing move before it asks whether the peer process still
  // exists (then again every interval while nothing moves).
  std::chrono::milliseconds livenessInterval{10};

  // The NUMA node for the slots this rank receives into (they are read here, once per step);
  // -1 leaves placement to the kernel (first touch).
  int numaNode = -1;

  // Where shm_open puts segments, for the free-space check (glibc: /dev/shm).
  std::string shmDirectory = "/dev/shm";
  // Tests only: free bytes the check demands instead of the segment's size (0: the real need).
  size_t requiredFreeBytesForTesting = 0;
};

}  // namespace hoop
