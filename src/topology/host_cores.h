// What the ranks of one host share: the cores they can run on together (the union of their CPU
// affinity masks) and the private cache each of those CPUs has. Every rank publishes its own
// mask and cache size at rendezvous (bootstrap.h), so every rank computes the same figures from
// the same table: they may steer choices that all ranks must make alike (tuner.h).
//
// Only the union of the masks tells two launches apart: a launcher that binds each rank to a core
// of its own (mpirun does by default for two ranks) leaves every rank a one-core mask, yet the
// ranks do not share a core; a cpuset that confines the whole job to one core gives every rank
// the same one-core mask, and they do.
#pragma once

#include <sched.h>

#include <bitset>
#include <cstddef>
#include <vector>

namespace hoop {

// One process's CPU affinity: bit c is set when it may run on CPU c.
inline constexpr size_t kMaxCpus = CPU_SETSIZE;
using CpuMask = std::bitset<kMaxCpus>;

// This process's mask (all CPUs up to kMaxCpus when it cannot be read).
CpuMask ownCpuMask();

// CPUs in the union of `masks`; at least 1.
size_t cpusInUnion(const std::vector<CpuMask>& masks);

// The level-2 cache of the first CPU in `mask`, divided among the CPUs that share it (two SMT
// siblings each get half of their core's): what one busy rank on that CPU may keep close.
// From sysfs; 0 when the machine does not say.
size_t level2BytesPerCpu(const CpuMask& mask);

}  // namespace hoop
