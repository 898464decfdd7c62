// hoop's own choice is deterministic by default: the same job, launched again on the same
// machine, runs the same schedules and so gives the same floating-point bits. Each case launches
// one job three times (2 and 4 ranks, over shm and over TCP, no HOOP_TUNE_* set): the workers
// (determinism_worker.cc) find the sizes where the default model switches allreduce schedule and
// sum random floats from one seed just below and at each; every launch must print the same
// schedules and the same hashes. A launch with another seed must print other hashes, so a
// comparison that could never fail would be caught here.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "process_runner.h"

namespace hoop::test {
namespace {

using Env = std::map<std::string, std::string>;

// One launch: every rank's "SWITCH" and "HASH" lines (which must be the same on every rank).
std::vector<std::string> launch(int nranks, const std::string& transport, int seed) {
  hoopUniqueId id;
  EXPECT_EQ(hoopGetUniqueId(&id), hoopSuccess) << hoopGetLastError(nullptr);
  ProcessGroup group;
  for (int r = 0; r < nranks; ++r) {
    const Env env = {{"HOOP_TEST_UID", toHex(id)},
                     {"HOOP_TEST_RANK", std::to_string(r)},
                     {"HOOP_TEST_NRANKS", std::to_string(nranks)},
                     {"HOOP_TRANSPORT", transport}};
    group.start({HOOP_DETERMINISM_WORKER, "--seed", std::to_string(seed)}, env);
  }
  const std::vector<ProcessResult> results = group.wait(std::chrono::seconds(240));
  std::vector<std::vector<std::string>> lines(results.size());
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 0) << "rank " << r << ":\n" << results[r].output;
    std::istringstream output(results[r].output);
    for (std::string line; std::getline(output, line);) {
      if (line.rfind("SWITCH ", 0) == 0 || line.rfind("HASH ", 0) == 0) lines[r].push_back(line);
    }
    EXPECT_EQ(lines[r], lines[0]) << "rank " << r << " of " << nranks << " over " << transport;
  }
  return lines.empty() ? std::vector<std::string>{} : lines[0];
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

class Launches : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(Launches, GiveTheSameBitsAtTheModelsSwitchPoints) {
  const auto [transport, nranks] = GetParam();
  constexpr int kSeed = 20261129;
  const std::vector<std::string> first = launch(nranks, transport, kSeed);
  size_t hashes = 0;
  for (const std::string& line : first) hashes += line.rfind("HASH ", 0) == 0 ? 1 : 0;
  // The default model switches schedule somewhere from 4 bytes to 16 MiB on every shape.
  ASSERT_GE(hashes, 2u) << joined(first);
  for (int again = 1; again < 3; ++again) {
    EXPECT_EQ(joined(launch(nranks, transport, kSeed)), joined(first))
        << "launch " << again + 1 << " of " << nranks << " ranks over " << transport;
  }
}

INSTANTIATE_TEST_SUITE_P(Defaults, Launches,
                         ::testing::Combine(::testing::Values("shm", "tcp"),
                                            ::testing::Values(2, 4)));

// The hashes do tell inputs apart: another seed gives other bits at every size.
TEST(Launches, AnotherSeedGivesOtherBits) {
  const std::vector<std::string> one = launch(4, "shm", 1);
  const std::vector<std::string> other = launch(4, "shm", 2);
  ASSERT_EQ(one.size(), other.size());
  size_t hashes = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    if (one[i].rfind("HASH ", 0) != 0) continue;
    ++hashes;
    EXPECT_NE(one[i], other[i]);
  }
  EXPECT_GE(hashes, 2u) << joined(one);
}

}  // namespace
}  // namespace hoop::test
