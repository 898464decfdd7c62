// One rank of a determinism test (determinism_test.cc): allreduces random floats at the sizes
// where hoop's own choice of allreduce schedule changes, and prints a hash of each result.
//
//   hoop_determinism_worker --seed S [--most-bytes B]
//
// HOOP_TEST_UID, HOOP_TEST_RANK and HOOP_TEST_NRANKS name the job. The worker first asks hoop
// which schedule it would run for every count of floats up to --most-bytes (by bisection between
// a geometric sweep's neighbours that differ), so that it finds the switch points of whatever
// model this machine's shape gives, and prints each as "SWITCH count: before -> after". Then, at
// one count below and at each switch point, it sums inputs drawn from a generator seeded by S and
// the rank, with mixed magnitudes so that another order of additions gives other bits, and
// prints "HASH count schedule hash". Calls are repeated until hoop says the choice is settled
// (with HOOP_TUNE_TRIAL=1 that takes the trial's calls), and the last call's result is hashed.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "hoop/hoop.h"
#include "worker_support.h"

namespace {

int rank = 0;
int nranks = 0;
hoopComm_t comm = nullptr;

void ok(hoopResult_t result, const std::string& what) {
  if (result != hoopSuccess) {
    hoop::test::failRank(rank,
                         what + ": " + hoopGetErrorString(result) + ": " + hoopGetLastError(comm));
  }
}

std::string scheduleFor(size_t count) {
  const char* name = nullptr;
  ok(hoopCommScheduleName(comm, hoopCollAllReduce, count, hoopFloat32, &name),
     "hoopCommScheduleName");
  return name;
}

// The counts c (from 2 floats up to `mostCount`) where the schedule for c differs from c - 1's.
std::vector<size_t> switchPoints(size_t mostCount) {
  std::vector<size_t> sweep;
  for (double c = 1; c <= static_cast<double>(mostCount); c *= 1.25) {
    const size_t count = static_cast<size_t>(c);
    if (sweep.empty() || count != sweep.back()) sweep.push_back(count);
  }
  std::vector<size_t> points;
  for (size_t i = 1; i < sweep.size(); ++i) {
    size_t low = sweep[i - 1];
    size_t high = sweep[i];
    if (scheduleFor(low) == scheduleFor(high)) continue;
    // One switch between them at least: the first count whose schedule is not low's.
    const std::string before = scheduleFor(low);
    while (high - low > 1) {
      const size_t mid = low + (high - low) / 2;
      (scheduleFor(mid) == before ? low : high) = mid;
    }
    points.push_back(high);
    std::printf("SWITCH %zu: %s -> %s\n", high, before.c_str(), scheduleFor(high).c_str());
  }
  return points;
}

// Floats of mixed sign and magnitude (2^-12 to 2^12): sums in another order round otherwise.
std::vector<float> randomInput(uint64_t seed, size_t count) {
  std::mt19937_64 generator(seed * 1000003u + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  std::vector<float> input(count);
  for (float& x : input) x = std::ldexp(mantissa(generator), exponent(generator));
  return input;
}

uint64_t fnv1a(const void* data, size_t bytes) {
  uint64_t hash = 14695981039346656037ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  return hash;
}

bool settled(size_t count) {
  int yes = 0;
  ok(hoopCommScheduleSettled(comm, hoopCollAllReduce, count, hoopFloat32, &yes),
     "hoopCommScheduleSettled");
  return yes != 0;
}

// The hash of the settled schedule's sum of this rank's random input of `count` floats.
void hashSum(uint64_t seed, size_t count) {
  const std::vector<float> input = randomInput(seed, count);
  std::vector<float> output(count);
  for (size_t call = 0;; ++call) {
    // Read before the call: the call that settles a class may itself be a trial's.
    const bool last = settled(count);
    ok(hoopAllReduce(input.data(), output.data(), count, hoopFloat32, hoopSum, comm, nullptr),
       "allreduce of " + std::to_string(count) + " floats");
    if (last) break;
    if (call == HOOP_MOST_CALLS_TO_SETTLE) {
      hoop::test::failRank(rank, std::to_string(count) + " floats: not settled");
    }
  }
  std::printf("HASH %zu %s %016llx\n", count, scheduleFor(count).c_str(),
              static_cast<unsigned long long>(fnv1a(output.data(), count * sizeof(float))));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1;
  size_t mostBytes = size_t{16} << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--most-bytes" && i + 1 < argc) {
      mostBytes = std::strtoull(argv[++i], nullptr, 10);
    } else {
      hoop::test::failRank(rank, "unknown argument " + arg);
    }
  }
  rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
  nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
  ok(hoopCommInitRank(&comm, nranks, hoop::test::testUniqueId(rank), rank), "hoopCommInitRank");
  for (const size_t point : switchPoints(mostBytes / sizeof(float))) {
    hashSum(seed, point - 1);
    hashSum(seed, point);
  }
  ok(hoopCommDestroy(comm), "destroy");
  std::printf("OK rank %d of %d\n", rank, nranks);
  return 0;
}
