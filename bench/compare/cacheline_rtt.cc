// hoop-cacheline-rtt: how long a cache line takes to go from one CPU to another and back, now.
//
// On a virtual machine the host decides where the guest's CPUs run, and it moves them: the round
// trip can change several times over within minutes, and shared-memory collectives slow down with
// it (bench/compare/README.md). A benchmark that records the round trip beside its figures can
// tell a schedule's cost from the host's placement of the moment.
//
//   hoop-cacheline-rtt [--cpus A,B] [--trips N] [--repeats R]
//
// Two processes, one pinned to CPU A and one to CPU B (default: the first two CPUs this process
// may run on), pass a counter in one shared cache line back and forth N times (default 200000),
// R times (default 5). Prints the median round trip over the repeats, with the fastest and
// slowest, in nanoseconds.
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/median.h"
#include "transport/shm/shm_segment.h"  // Mapping

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kLineRegion = 4096;  // one page, shared by the two processes

struct Options {
  std::optional<std::pair<int, int>> cpus;
  uint64_t trips = 200000;
  size_t repeats = 5;
};

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "hoop-cacheline-rtt: %s\n"
               "usage: hoop-cacheline-rtt [--cpus A,B] [--trips N] [--repeats R]\n",
               problem);
  std::exit(2);
}

// A count above zero, as hoop reads sizes (a plain number, or with a K, M or G suffix).
uint64_t positive(const char* text, const char* flag) {
  const std::optional<size_t> value = hoop::parseByteSize(text);
  if (!value || *value == 0) usage((std::string(flag) + " takes a positive whole number").c_str());
  return *value;
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 == argc) usage((flag + " needs a value").c_str());
    const char* value = argv[++i];
    if (flag == "--cpus") {
      int a = 0;
      int b = 0;
      char extra = 0;
      if (std::sscanf(value, "%d,%d%c", &a, &b, &extra) != 2 || a < 0 || b < 0 || a == b) {
        usage("--cpus takes two different CPU numbers, A,B");
      }
      options.cpus = {{a, b}};
    } else if (flag == "--trips") {
      options.trips = positive(value, "--trips");
    } else if (flag == "--repeats") {
      options.repeats = positive(value, "--repeats");
    } else {
      usage(("unknown option " + flag).c_str());
    }
  }
  return options;
}

// The first two CPUs this process may run on, if it may run on two.
std::optional<std::pair<int, int>> firstTwoCpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return std::nullopt;
  std::vector<int> found;
  for (int cpu = 0; cpu < CPU_SETSIZE && found.size() < 2; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) found.push_back(cpu);
  }
  if (found.size() < 2) return std::nullopt;
  return std::pair{found[0], found[1]};
}

bool pinTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return ::sched_setaffinity(0, sizeof(one), &one) == 0;
}

// Waits until the line holds `value`; false once `peerAlive` says the other side is gone, or it
// has not written the value by the deadline (its CPU never ran it).
template <typename PeerAlive>
bool awaitValue(const std::atomic<uint64_t>& line, uint64_t value, Clock::time_point deadline,
                PeerAlive peerAlive) {
  for (uint32_t spins = 1;; ++spins) {
    if (line.load(std::memory_order_acquire) == value) return true;
    if (spins % 65536 == 0 && (Clock::now() > deadline || !peerAlive())) {
      // The peer may have written its last value and gone since the load above.
      return line.load(std::memory_order_acquire) == value;
    }
  }
}

// One repeat: the parent writes odd values and waits for the even reply, the child the reverse.
// Returns nanoseconds a round trip, or nullopt (with a message) when the child failed.
std::optional<double> roundTripNs(std::pair<int, int> cpus, uint64_t trips) {
  void* address =
      ::mmap(nullptr, kLineRegion, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) {
    std::perror("hoop-cacheline-rtt: mmap");
    return std::nullopt;
  }
  const hoop::Mapping shared(address, kLineRegion);
  auto* line = new (shared.get()) std::atomic<uint64_t>(0);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("hoop-cacheline-rtt: fork");
    return std::nullopt;
  }
  if (child == 0) {
    if (!pinTo(cpus.second)) ::_exit(3);
    const pid_t parent = ::getppid();
    const auto parentAlive = [parent] { return ::getppid() == parent; };
    for (uint64_t trip = 0; trip < trips; ++trip) {
      if (!awaitValue(*line, 2 * trip + 1, deadline, parentAlive)) ::_exit(4);
      line->store(2 * trip + 2, std::memory_order_release);
    }
    ::_exit(0);
  }
  int status = 0;
  bool reaped = false;
  const auto childAlive = [&] {
    reaped = ::waitpid(child, &status, WNOHANG) == child;
    return !reaped;
  };
  if (!pinTo(cpus.first)) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    std::fprintf(stderr, "hoop-cacheline-rtt: this process may not run on CPU %d\n", cpus.first);
    return std::nullopt;
  }
  bool answered = true;
  const auto start = Clock::now();
  for (uint64_t trip = 0; answered && trip < trips; ++trip) {
    line->store(2 * trip + 1, std::memory_order_release);
    answered = awaitValue(*line, 2 * trip + 2, deadline, childAlive);
  }
  const std::chrono::duration<double, std::nano> spent = Clock::now() - start;
  if (!reaped) {
    if (!answered) ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  if (!answered || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const bool unpinned = WIFEXITED(status) && WEXITSTATUS(status) == 3;
    std::fprintf(stderr, "hoop-cacheline-rtt: %s CPU %d\n",
                 unpinned ? "this process may not run on" : "no answer within 30 s from",
                 cpus.second);
    return std::nullopt;
  }
  return spent.count() / static_cast<double>(trips);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  const std::optional<std::pair<int, int>> cpus = options.cpus ? options.cpus : firstTwoCpus();
  if (!cpus) {
    std::printf("hoop-cacheline-rtt: this process may run on only one CPU: nothing to measure\n");
    return 0;
  }
  std::vector<double> trips;
  for (size_t r = 0; r < options.repeats; ++r) {
    const std::optional<double> ns = roundTripNs(*cpus, options.trips);
    if (!ns) return 1;
    trips.push_back(*ns);
  }
  const double fastest = *std::min_element(trips.begin(), trips.end());
  const double slowest = *std::max_element(trips.begin(), trips.end());
  std::printf(
      "cache line round trip, CPU %d <-> CPU %d: %.0f ns median (%.0f-%.0f) over %zu "
      "repeats of %llu\n",
      cpus->first, cpus->second, hoop::medianOf(trips), fastest, slowest, options.repeats,
      static_cast<unsigned long long>(options.trips));
  return 0;
}
