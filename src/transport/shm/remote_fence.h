// An asymmetric fence for the shared-memory sleep handshake. A rank that wakes its peer does so
// after every publish and release, many times per microsecond-long call; a rank that sleeps does
// so after tens of microseconds of idle spinning. membarrier(2) moves the full fence the
// handshake needs from the frequent side to the rare one: the sleeper forces a barrier on every
// CPU running a registered process, so a registered waker needs only a compiler barrier.
#pragma once

namespace hoop {

// Registers this process, once, for barriers its peers force (MEMBARRIER_CMD_GLOBAL_EXPEDITED).
// True when every later forced barrier includes this process's threads, so a peer that forces
// one before sleeping may rely on it instead of our own fence. False when the kernel or a
// seccomp policy refuses; then this process keeps its fence.
bool joinForcedFences() noexcept;

// A full memory barrier on every CPU now running a process that joined (and on this one).
// Returns false with errno set when the kernel refuses it.
bool forceFenceOnJoinedProcesses() noexcept;

}  // namespace hoop
