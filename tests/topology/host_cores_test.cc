// The cores a host's ranks share (the union of their affinity masks) and the level-2 cache of
// one CPU, against what the kernel and the C library say.
#include "topology/host_cores.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <vector>

namespace hoop {
namespace {

CpuMask cpusOf(std::initializer_list<size_t> cpus) {
  CpuMask mask;
  for (size_t cpu : cpus) mask.set(cpu);
  return mask;
}

TEST(HostCores, OwnMaskIsWhatTheKernelAllows) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  const CpuMask own = ownCpuMask();
  EXPECT_EQ(own.count(), static_cast<size_t>(CPU_COUNT(&allowed)));
  for (size_t cpu = 0; cpu < kMaxCpus; ++cpu) EXPECT_EQ(own.test(cpu), CPU_ISSET(cpu, &allowed));
}

TEST(HostCores, OwnMaskFollowsABinding) {
  cpu_set_t original;
  CPU_ZERO(&original);
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  size_t first = 0;
  while (!CPU_ISSET(first, &original)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const CpuMask bound = ownCpuMask();
  sched_setaffinity(0, sizeof(original), &original);
  EXPECT_EQ(bound, cpusOf({first}));
}

TEST(HostCores, RanksBoundToDifferentCoresDoNotShareOne) {
  EXPECT_EQ(cpusInUnion({cpusOf({0}), cpusOf({1})}), 2u);
  EXPECT_EQ(cpusInUnion({cpusOf({0, 1}), cpusOf({1, 2}), cpusOf({5})}), 4u);
}

TEST(HostCores, RanksConfinedToOneCoreShareIt) {
  EXPECT_EQ(cpusInUnion({cpusOf({3}), cpusOf({3}), cpusOf({3})}), 1u);
}

TEST(HostCores, NoMaskCountsAsOneCpu) {
  EXPECT_EQ(cpusInUnion({}), 1u);
  EXPECT_EQ(cpusInUnion({CpuMask{}}), 1u);
}

// sysfs (what hoop reads) against the C library's figure, which comes from cpuid on x86.
TEST(HostCores, LevelTwoCacheMatchesTheCLibrary) {
  const long fromLibc = sysconf(_SC_LEVEL2_CACHE_SIZE);
  const size_t fromSysfs = level2BytesPerCpu(ownCpuMask());
  if (fromLibc <= 0 || fromSysfs == 0) {
    GTEST_SKIP() << "this machine does not report its level-2 cache (C library: " << fromLibc
                 << ", sysfs: " << fromSysfs << ")";
  }
  // sysfs divides a cache among the CPUs that share it (SMT siblings): a whole share of it.
  EXPECT_EQ(static_cast<size_t>(fromLibc) % fromSysfs, 0u);
  EXPECT_LE(fromSysfs, static_cast<size_t>(fromLibc));
  EXPECT_GE(fromSysfs * 8, static_cast<size_t>(fromLibc));
}

TEST(HostCores, NoCpuNoCache) { EXPECT_EQ(level2BytesPerCpu(CpuMask{}), 0u); }

}  // namespace
}  // namespace hoop
