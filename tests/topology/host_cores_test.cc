// The cores a host's ranks share: the union of their affinity masks, with real processes.
#include "topology/host_cores.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace hoop {
namespace {

std::vector<int> allowedCpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  EXPECT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return cpus;
}

// A child that sleeps on one core until killed.
class PinnedChild {
 public:
  explicit PinnedChild(int cpu) {
    pid_ = fork();
    if (pid_ == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof(one), &one);
      pause();
      _exit(0);
    }
  }
  ~PinnedChild() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  int pid() const { return pid_; }

 private:
  int pid_;
};

// Waits until the child runs with its one-core mask (it sets it itself after fork).
void awaitMask(int pid, int cpu) {
  for (int i = 0; i < 2000; ++i) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(pid, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) == 1 &&
        CPU_ISSET(cpu, &mask)) {
      return;
    }
    usleep(1000);
  }
  FAIL() << "child " << pid << " never ran on cpu " << cpu;
}

TEST(HostCores, OwnMaskWhenAlone) { EXPECT_EQ(coresOfLocalRanks({}), allowedCpus().size()); }

// Runs `body` with this thread bound to `ownCpu` and a peer process bound to `peerCpu`, then
// restores this thread's mask: two ranks as a launcher would bind them.
template <typename Body>
void withPinnedPair(int ownCpu, int peerCpu, Body body) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  cpu_set_t own;
  CPU_ZERO(&own);
  CPU_SET(ownCpu, &own);
  ASSERT_EQ(sched_setaffinity(0, sizeof(own), &own), 0);
  {
    PinnedChild peer(peerCpu);
    awaitMask(peer.pid(), peerCpu);
    body(peer.pid());
  }
  sched_setaffinity(0, sizeof(original), &original);
}

TEST(HostCores, RanksBoundToDifferentCoresDoNotShareOne) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 cores, this process may use " << cpus.size();
  size_t alone = 0;
  size_t together = 0;
  withPinnedPair(cpus[0], cpus[1], [&](int peer) {
    alone = coresOfLocalRanks({});
    together = coresOfLocalRanks({peer});
  });
  EXPECT_EQ(alone, 1u);
  EXPECT_EQ(together, 2u);
}

TEST(HostCores, RanksConfinedToOneCoreShareIt) {
  const std::vector<int> cpus = allowedCpus();
  size_t together = 0;
  withPinnedPair(cpus[0], cpus[0], [&](int peer) { together = coresOfLocalRanks({peer}); });
  EXPECT_EQ(together, 1u);
}

TEST(HostCores, AGonePeerAddsNothing) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  EXPECT_EQ(coresOfLocalRanks({gone}), allowedCpus().size());
}

}  // namespace
}  // namespace hoop
