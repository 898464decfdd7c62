// Whole-job allreduces, checked exactly (collective_check.h).
#include "collective_check.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "algorithms/link_probe.h"
#include "base/clock.h"
#include "base/error.h"
#include "bisection.h"
#include "measure.h"

namespace hoop::validate {

namespace {

// Rank r's input at element i: small integers whose sum over any set of ranks stays exact.
int32_t inputValue(int rank, size_t i) { return (rank + 1) * static_cast<int32_t>(i % 1000 + 1); }

// The input of `globalRank`, with the test hook's byte flipped on its rank (link_probe.h).
std::vector<int32_t> inputOf(int globalRank, size_t count) {
  std::vector<int32_t> input(count);
  for (size_t i = 0; i < count; ++i) input[i] = inputValue(globalRank, i);
  const FlipByteHook hook = flipByteHook();
  if (hook.rank == globalRank) {
    auto* bytes = reinterpret_cast<uint8_t*>(input.data());
    bytes[hook.offset % (count * sizeof(int32_t))] ^= 0xff;
  }
  return input;
}

}  // namespace

int allreduceWrong(hoopComm_t comm, int globalRank, const std::vector<int>& members, size_t count,
                   double& seconds) {
  std::vector<int32_t> data = inputOf(globalRank, count);
  const Clock::time_point start = Clock::now();
  check(comm, hoopAllReduce(data.data(), data.data(), count, hoopInt32, hoopSum, comm, nullptr),
        "the allreduce check");
  seconds = std::chrono::duration<double>(Clock::now() - start).count();
  int32_t weight = 0;
  for (int rank : members) weight += rank + 1;
  int32_t wrong = 0;
  for (size_t i = 0; i < count && wrong == 0; ++i) {
    wrong = data[i] != weight * static_cast<int32_t>(i % 1000 + 1) ? 1 : 0;
  }
  check(comm, hoopAllReduce(&wrong, &wrong, 1, hoopInt32, hoopMax, comm, nullptr),
        "agreeing on the allreduce's result");
  return wrong;
}

std::vector<CollectiveOutcome> checkCollectives(hoopComm_t comm, const Layout& layout, size_t bytes,
                                                Bisection* bisection) {
  int self = 0;
  check(comm, hoopCommUserRank(comm, &self), "rank");
  const size_t count = std::max<size_t>(1, bytes / sizeof(int32_t));
  std::vector<int> everyone(static_cast<size_t>(layout.ranks()));
  for (size_t r = 0; r < everyone.size(); ++r) everyone[r] = static_cast<int>(r);
  std::vector<CollectiveOutcome> outcomes;
  for (const char* schedule : {"ring", "tree"}) {
    CollectiveOutcome outcome;
    outcome.schedule = schedule;
    const std::string rule = std::string("allreduce:=") + schedule;
    check(comm, hoopCommSetAlgorithms(comm, rule.c_str()), "forcing the allreduce schedule");
    double seconds = 0;
    allreduceWrong(comm, self, everyone, count, seconds);  // the first call sets up connections
    const int wrong = allreduceWrong(comm, self, everyone, count, seconds);
    double slowest = seconds;
    check(comm, hoopAllReduce(&slowest, &slowest, 1, hoopFloat64, hoopMax, comm, nullptr),
          "agreeing on the allreduce's time");
    outcome.ran = true;
    outcome.correct = wrong == 0;
    outcome.seconds = slowest;
    const double n = static_cast<double>(layout.ranks());
    outcome.busGBps =
        slowest > 0 ? 2 * (n - 1) / n * static_cast<double>(count * 4) / slowest / 1e9 : 0;
    check(comm, hoopCommSetAlgorithms(comm, nullptr), "restoring the schedule choice");
    if (!outcome.correct && bisection != nullptr && bisection->possible()) {
      BisectionResult found = bisection->run(count);
      outcome.bisection = std::move(found.steps);
      outcome.blamedHost = found.blamedHost;
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace hoop::validate
