// The flag operations as an emulated stream runs them: atomics on 32-bit words in memory shared
// between the processes of the host, with the orderings device_runtime.h promises.
#pragma once

#include <cstdint>

namespace hoop::emulated {

// hoopInvalidArgument unless `flag` is a non-null, 4-byte aligned word (atomic_ref requires it).
void checkFlag(const void* flag, const char* operation);

// Release store: every write the stream made before is visible to whoever acquires the value.
void storeFlag(uint32_t* flag, uint32_t value);

// Returns once (*flag & mask) != 0, with acquire ordering: later operations see what the flag's
// writer wrote before it. Spins briefly (the writer is usually about to set it), then yields,
// then sleeps in short steps: a host may run dozens of emulated streams on two CPUs, and a waiter
// that keeps the CPU would starve the very stream it waits for.
void waitFlagSet(const uint32_t* flag, uint32_t mask);

// *counter += 1, as one atomic read-modify-write (acq_rel: ordered after the stream's earlier
// writes, like a kernel's atomicAdd after its stores).
void incrementCounter(uint32_t* counter);

}  // namespace hoop::emulated
