// Calibration against where the ranks really run: two ranks as threads of this process, each
// pinned to a CPU of its choosing after the communicator is up, measure their links again.
#include "algorithms/calibration.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <array>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap.h"
#include "core/communicator.h"
#include "hoop/hoop.h"
#include "topology/host_cores.h"

namespace hoop {
namespace {

// The CPUs this process may use, in order.
std::vector<int> allowedCpus() {
  const CpuMask mask = ownCpuMask();
  std::vector<int> cpus;
  for (size_t cpu = 0; cpu < mask.size(); ++cpu) {
    if (mask.test(cpu)) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

// Binds the calling thread alone to `cpu`.
void pinThisThread(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(cpu, &mask);
  ASSERT_EQ(sched_setaffinity(0, sizeof(mask), &mask), 0) << "CPU " << cpu;
}

// Two ranks (over shared memory unless HOOP_TRANSPORT says otherwise), created with this process's
// whole mask (so each host has a CPU per rank), then pinned to cpus[0] and cpus[1] and calibrated
// again. Returns each rank's outcome.
std::array<CalibrationOutcome, 2> calibratePinned(std::array<int, 2> cpus) {
  hoopUniqueId uid;
  EXPECT_EQ(hoopGetUniqueId(&uid), hoopSuccess) << hoopGetLastError(nullptr);
  const BootstrapId id = BootstrapId::decode(uid);
  Config config = Config::fromEnvironment();
  config.costModel.calibrate = true;  // off by default (calibration.h)
  std::array<CalibrationOutcome, 2> outcomes;
  std::array<std::string, 2> failures;
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        std::unique_ptr<Communicator> comm = Communicator::create(id, 2, rank, nullptr, config);
        pinThisThread(cpus[static_cast<size_t>(rank)]);
        outcomes[static_cast<size_t>(rank)] = calibrateCostModel(*comm);
      } catch (const std::exception& e) {
        failures[static_cast<size_t>(rank)] = e.what();
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  return outcomes;
}

// Whether a set-aside line gives stacked ranks as its reason.
bool saysStacked(const std::string& setAsideLine) {
  return setAsideLine.find("two ranks of one host stayed on one CPU") != std::string::npos;
}

bool mentionsOneCpu(const CalibrationOutcome& outcome) {
  for (const std::string& line : outcome.setAside) {
    if (saysStacked(line)) return true;
  }
  return false;
}

// Pinned, they stay stacked through every attempt: the first two are set aside, and the last
// one's figures are taken, as the job would run.
TEST(Calibration, RanksStackedOnOneCpuAreMeasuredAgainThenTakenAsTheyRun) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs in this process's mask";
  const auto outcomes = calibratePinned({cpus[0], cpus[0]});
  for (size_t rank = 0; rank < outcomes.size(); ++rank) {
    const std::vector<std::string>& setAside = outcomes[rank].setAside;
    ASSERT_GE(setAside.size(), 2u) << "rank " << rank;
    for (size_t attempt = 0; attempt < 2; ++attempt) {
      EXPECT_TRUE(saysStacked(setAside[attempt])) << setAside[attempt];
    }
    // A busy machine may still make the last attempt's small steps too slow to be the link's;
    // the stacking itself no longer sets it aside.
    if (setAside.size() == 3) {
      EXPECT_NE(setAside[2].find("slower period"), std::string::npos) << setAside[2];
    }
    EXPECT_EQ(outcomes[rank].adopted, setAside.size() == 2) << "rank " << rank;
  }
  EXPECT_EQ(outcomes[0].setAside, outcomes[1].setAside) << "the ranks decided differently";
}

TEST(Calibration, RanksOnCpusOfTheirOwnAreNotTakenForStacked) {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs in this process's mask";
  const auto outcomes = calibratePinned({cpus[0], cpus[1]});
  for (size_t rank = 0; rank < outcomes.size(); ++rank) {
    // A busy machine may still set an attempt aside for another reason.
    EXPECT_FALSE(mentionsOneCpu(outcomes[rank])) << "rank " << rank;
  }
  EXPECT_EQ(outcomes[0].adopted, outcomes[1].adopted) << "the ranks decided differently";
}

// Calibrated figures land on powers of two, so a run's noise moves the model only where a
// figure lies near the middle between two (a factor of sqrt(2) from each).
TEST(Calibration, FiguresSnapToTheNearestPowerOfTwo) {
  EXPECT_EQ(snapToGrid(1.0), 1.0);
  EXPECT_EQ(snapToGrid(1.3), 1.0);
  EXPECT_EQ(snapToGrid(1.5), 2.0);
  EXPECT_EQ(snapToGrid(0.16), 0.125);
  EXPECT_EQ(snapToGrid(0.18), 0.25);
  EXPECT_EQ(snapToGrid(6500.0), 8192.0);
  EXPECT_EQ(snapToGrid(5000.0), 4096.0);
  // Figures within 1.3x of each other around one power of two agree.
  for (const double figure : {0.2, 2.2, 4.9, 9000.0}) {
    EXPECT_EQ(snapToGrid(figure * 0.9), snapToGrid(figure * 1.1)) << figure;
  }
}

}  // namespace
}  // namespace hoop
