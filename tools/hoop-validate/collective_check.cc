// Whole-job allreduces and the bisection of a wrong one (collective_check.h).
#include "collective_check.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "algorithms/link_probe.h"
#include "base/clock.h"
#include "base/error.h"
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

// Runs one allreduce of `count` int32 over comm, whose members are `members` (global ranks);
// returns 1 on every rank if any rank's result is wrong. `seconds`: this rank's time.
int wrongAnywhere(hoopComm_t comm, int globalRank, const std::vector<int>& members, size_t count,
                  double& seconds) {
  std::vector<int32_t> data = inputOf(globalRank, count);
  const Clock::time_point start = Clock::now();
  check(comm, hoopAllReduce(data.data(), data.data(), count, hoopInt32, hoopSum, comm, nullptr),
        "whole-job allreduce");
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

// Halves the hosts of a wrong allreduce until one is left; returns it (or -1) on every rank.
int bisect(hoopComm_t world, const Layout& layout, int self, size_t count,
           std::vector<std::string>& steps) {
  std::vector<int> suspects(static_cast<size_t>(layout.hosts()));
  for (size_t h = 0; h < suspects.size(); ++h) suspects[h] = static_cast<int>(h);
  const int myHost = layout.hostOf[static_cast<size_t>(self)];
  while (suspects.size() > 1) {
    const size_t half = suspects.size() / 2;
    const auto place = std::find(suspects.begin(), suspects.end(), myHost);
    const int color = place == suspects.end()                                ? HOOP_SPLIT_NOCOLOR
                      : static_cast<size_t>(place - suspects.begin()) < half ? 0
                                                                             : 1;
    hoopComm_t part = nullptr;
    check(world, hoopCommSplit(world, color, self, &part, nullptr), "bisecting the job");
    int32_t wrongHalf[2] = {0, 0};
    if (part != nullptr) {
      std::vector<int> members;
      const size_t begin = color == 0 ? 0 : half;
      const size_t end = color == 0 ? half : suspects.size();
      for (size_t i = begin; i < end; ++i) {
        for (int rank : layout.hostRanks[static_cast<size_t>(suspects[i])]) members.push_back(rank);
      }
      double seconds = 0;
      wrongHalf[color] = wrongAnywhere(part, self, members, count, seconds);
      hoopCommDestroy(part);
    }
    check(world, hoopAllReduce(wrongHalf, wrongHalf, 2, hoopInt32, hoopMax, world, nullptr),
          "agreeing on the halves");
    std::string first;
    std::string second;
    for (size_t i = 0; i < suspects.size(); ++i) {
      (i < half ? first : second) +=
          (i == 0 || i == half ? "" : ",") + layout.hostNames[static_cast<size_t>(suspects[i])];
    }
    steps.push_back(str("{", first, "}: ", wrongHalf[0] ? "wrong" : "right", "; {", second,
                        "}: ", wrongHalf[1] ? "wrong" : "right"));
    if (wrongHalf[0] == wrongHalf[1]) return -1;  // both or neither: not one half's fault
    if (wrongHalf[0]) {
      suspects.resize(half);
    } else {
      suspects.erase(suspects.begin(), suspects.begin() + static_cast<std::ptrdiff_t>(half));
    }
  }
  return suspects.front();
}

}  // namespace

std::vector<CollectiveOutcome> checkCollectives(hoopComm_t comm, const Layout& layout,
                                                size_t bytes) {
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
    wrongAnywhere(comm, self, everyone, count, seconds);  // the first call sets up connections
    const int wrong = wrongAnywhere(comm, self, everyone, count, seconds);
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
    if (!outcome.correct && layout.hosts() > 1) {
      outcome.blamedHost = bisect(comm, layout, self, count, outcome.bisection);
    }
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace hoop::validate
