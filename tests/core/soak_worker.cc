// One rank of the load, resource and failure tests (tests/core/soak_test.cc). Joins with
// HOOP_TEST_UID, HOOP_TEST_RANK and HOOP_TEST_NRANKS (or, with --init env, from hooprun's
// variables), runs one suite against the public C API, and exits 0 only if every result was
// exact and every resource count came back where it started.
//
//   hoop_soak_worker --suite soak [--small N] [--large N] [--heap-bound-kib K] [--anon-bound-kib K]
//   hoop_soak_worker --suite cycles [--cycles N] [--heap-bound-kib K] [--anon-bound-kib K]
//   hoop_soak_worker --suite abort | peer-failure
//   hoop_soak_worker --suite kill-loop [--init env] [--suicide-rank R]
//   hoop_soak_worker --suite mismatch --what kind|count|dtype|op|root
//
// Resources are this process's own: open fds (/proc/self/fd), threads (/proc/self/task),
// resident memory (/proc/self/statm) and mappings of hoop's shared-memory segments
// (/proc/self/maps lines naming /dev/shm/hoop-*, the names src/transport/shm gives them).
#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "algorithms/schedule_trial.h"
#include "hoop/hoop.h"
#include "reference.h"
#include "worker_support.h"

namespace {

using hoop::DataType;
using hoop::kMostCallsToSettle;
using hoop::RedOp;

int rank = -1;
int nranks = 0;

[[noreturn]] void die(const std::string& message) { hoop::test::failRank(rank, message); }

void ok(hoopResult_t result, hoopComm_t comm, const std::string& what) {
  if (result != hoopSuccess) {
    die(what + ": " + hoopGetErrorString(result) + ": " + hoopGetLastError(comm));
  }
}

const char* resultName(hoopResult_t result) {
  switch (result) {
    case hoopSuccess: return "hoopSuccess";
    case hoopInvalidUsage: return "hoopInvalidUsage";
    case hoopRemoteError: return "hoopRemoteError";
    case hoopTimeout: return "hoopTimeout";
    case hoopSystemError: return "hoopSystemError";
    case hoopInternalError: return "hoopInternalError";
    case hoopInvalidArgument: return "hoopInvalidArgument";
    default: return "another error";
  }
}

int64_t monotonicMicros() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

size_t countEntries(const char* directory) {
  size_t count = 0;
  DIR* dir = opendir(directory);
  if (dir == nullptr) die(std::string("opendir ") + directory);
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

// What a leak would grow. Memory is watched two ways, because resident memory as a whole is not
// a leak detector: it also grows when a shm slot or a stack page is first touched (2 MiB of it
// over a soak after warm-up, as a schedule reaches slots the warm-up did not), or when the
// allocator's free space fragments.
// - heapInUseKib: bytes the allocator has handed out and not had back (glibc's mallinfo2), the
//   figure that a forgotten free moves and nothing else does;
// - anonKib: resident anonymous memory (RssAnon) once the allocator has handed its free pages
//   back, for memory taken without malloc (mmap, thread stacks).
struct Resources {
  size_t fds = 0;  // includes the one opendir holds while counting, every time alike
  size_t threads = 0;
  size_t rssKib = 0;
  size_t anonKib = 0;
  size_t heapInUseKib = 0;
  size_t shmMappings = 0;

  static Resources sample() {
    // Free memory the allocator keeps is not held by anyone: glibc keeps up to twice its
    // (self-raising) mmap threshold free at the heap's top, 1.2 MiB here once a large buffer has
    // come and gone, and whether that happens before the first sample or after it is a matter of
    // timing. Handing it back first leaves only memory that something still holds.
    malloc_trim(0);
    Resources r;
    r.fds = countEntries("/proc/self/fd");
    r.threads = countEntries("/proc/self/task");
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmRSS:", 0) == 0) r.rssKib = std::stoul(line.substr(6));
      if (line.rfind("RssAnon:", 0) == 0) r.anonKib = std::stoul(line.substr(8));
    }
    const struct mallinfo2 heap = mallinfo2();
    r.heapInUseKib = (heap.uordblks + heap.hblkhd) / 1024;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
      if (line.find("/dev/shm/hoop-") != std::string::npos) ++r.shmMappings;
    }
    return r;
  }

  std::string describe() const {
    return "fds " + std::to_string(fds) + ", threads " + std::to_string(threads) + ", rss " +
           std::to_string(rssKib) + " KiB (anonymous " + std::to_string(anonKib) +
           " KiB), heap in use " + std::to_string(heapInUseKib) + " KiB, shm mappings " +
           std::to_string(shmMappings);
  }
};

// The memory bounds of a suite: heap in use, and anonymous resident memory.
struct MemoryBounds {
  size_t heapKib = 0;
  size_t anonKib = 0;
};

// Compares fds, threads and shm mappings exactly. A helper thread or socket may take a moment
// to go after destroy returns (a rendezvous root thread finishing its last reply), so this looks
// again for up to two seconds before calling a difference a leak.
void expectSameHandles(const Resources& before, const char* when) {
  Resources now = Resources::sample();
  for (int look = 0; look < 40; ++look) {
    if (now.fds == before.fds && now.threads == before.threads &&
        now.shmMappings == before.shmMappings) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    now = Resources::sample();
  }
  die(std::string(when) + ": resources not back: before " + before.describe() + "; after " +
      now.describe());
}

void report(const char* what, const Resources& before, const Resources& after) {
  std::printf("RESOURCES rank %d %s: before %s; after %s\n", rank, what, before.describe().c_str(),
              after.describe().c_str());
  std::fflush(stdout);
}

hoopComm_t join(const std::string& init) {
  hoopComm_t comm = nullptr;
  if (init == "uid") {
    rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
    nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
    ok(hoopCommInitRank(&comm, nranks, hoop::test::testUniqueId(rank), rank), nullptr,
       "hoopCommInitRank");
  } else if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
    die(std::string("hoopCommInitFromEnv: ") + hoopGetLastError(nullptr));
  }
  ok(hoopCommUserRank(comm, &rank), comm, "rank");
  ok(hoopCommCount(comm, &nranks), comm, "count");
  return comm;
}

// One allreduce with the reference inputs, checked exactly. `cache` keeps inputs and expected
// results by (type, op, count), so the large calls do not spend their time building them.
class CheckedAllReduce {
 public:
  explicit CheckedAllReduce(hoopComm_t comm) : comm_(comm) {}

  // Runs each call in turn until hoop has settled its schedule for every one
  // (hoopCommScheduleSettled): the schedules it times on a size class's first calls are part of
  // the warm-up, as each one's first use grows the staging memory. A class is timed at the size
  // it was first called with, so other sizes of it settle only when that one runs: hence rounds
  // over all of them, that one among them, as many as a class's trial and confirmations take.
  void settle(const std::vector<std::tuple<DataType, RedOp, size_t>>& calls) {
    for (size_t round = 0; round <= kMostCallsToSettle; ++round) {
      bool allSettled = true;
      for (const auto& [t, op, count] : calls) {
        int settled = 0;
        ok(hoopCommScheduleSettled(comm_, hoopCollAllReduce, count, static_cast<hoopDataType_t>(t),
                                   &settled),
           comm_, "hoopCommScheduleSettled");
        if (settled != 0) continue;
        allSettled = false;
        run(t, op, count, false, "settling allreduce of " + std::to_string(count));
      }
      if (allSettled) return;
    }
    die("hoop's schedules were not settled after " + std::to_string(kMostCallsToSettle + 1) +
        " rounds of calls");
  }

  void run(DataType t, RedOp op, size_t count, bool inPlace, const std::string& what) {
    auto& [input, expected] = prepare(t, op, count);
    output_.resize(input.size());
    std::memcpy(output_.data(), input.data(), input.size());
    ok(hoopAllReduce(inPlace ? output_.data() : input.data(), output_.data(), count,
                     static_cast<hoopDataType_t>(t), static_cast<hoopRedOp_t>(op), comm_, nullptr),
       comm_, what);
    if (std::memcmp(output_.data(), expected.data(), expected.size()) != 0) {
      die(what + ": result differs from the reference");
    }
  }

  // Builds (once) the input and expected result of a call, so that a resource sample taken after
  // preparing every call to come does not count this test's own cache as growth.
  std::pair<std::vector<char>, std::vector<char>>& prepare(DataType t, RedOp op, size_t count) {
    Key key{static_cast<int>(t), static_cast<int>(op), count};
    auto found = cache_.find(key);
    if (found == cache_.end()) {
      found = cache_
                  .emplace(key, std::make_pair(hoop::test::makeInput(t, op, rank, nranks, count),
                                               hoop::test::makeExpected(t, op, nranks, count)))
                  .first;
    }
    return found->second;
  }

 private:
  using Key = std::tuple<int, int, size_t>;
  hoopComm_t comm_;
  std::map<Key, std::pair<std::vector<char>, std::vector<char>>> cache_;
  std::vector<char> output_;
};

bool underSanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  return false;
}

// Fails the suite when heap in use or anonymous resident memory grew past its bound between the
// two samples. Skipped under a sanitizer: its own allocator and quarantine hold freed memory.
void expectMemoryWithin(const char* suite, const Resources& before, const Resources& after,
                        const MemoryBounds& bounds) {
  if (underSanitizer()) {
    std::printf("rank %d: memory not checked (the sanitizer's quarantine holds freed memory)\n",
                rank);
    return;
  }
  auto check = [&](const char* what, size_t was, size_t now, size_t bound) {
    if (now > was + bound) {
      die(std::string(suite) + ": " + what + " grew by " + std::to_string(now - was) +
          " KiB (bound " + std::to_string(bound) + " KiB)");
    }
  };
  check("heap in use", before.heapInUseKib, after.heapInUseKib, bounds.heapKib);
  check("anonymous resident memory", before.anonKib, after.anonKib, bounds.anonKib);
}

// `small` back-to-back small allreduces (1..64 elements, every type and op, in and out of
// place) with `large` 1-4 MiB ones (int32, float32, int64; sum and max) and a barrier spread evenly
// among them, every result exact. The first tenth is warm-up (connections, eager buffers, caches,
// allocator arenas and hoop's timed choice of schedules all reach their steady state); resources
// are sampled after it and at the end.
void soak(hoopComm_t comm, size_t small, size_t large, const MemoryBounds& bounds) {
  CheckedAllReduce allReduce(comm);
  const size_t largeEvery = large == 0 ? small + 1 : small / large;
  const size_t warmUp = small / 10;
  const DataType largeTypes[] = {DataType::kInt32, DataType::kFloat32, DataType::kInt64};
  const size_t largeCounts[] = {size_t{1} << 18, (size_t{1} << 19) + 3, size_t{1} << 19};
  auto smallCall = [](size_t i) {
    return std::make_tuple(static_cast<DataType>(i % hoop::kNumDataTypes),
                           static_cast<RedOp>((i / hoop::kNumDataTypes) % hoop::kNumRedOps),
                           1 + (i * 7) % 64);
  };
  Resources before;
  size_t largeDone = 0;
  for (size_t i = 0; i < small; ++i) {
    if (i == warmUp) {
      // Every small call of the soak, the warm-up's included: a class is timed at the size its
      // first call had.
      std::vector<std::tuple<DataType, RedOp, size_t>> calls;
      for (size_t any = 0; any < small; ++any) {
        auto [t, op, count] = smallCall(any);
        if (any >= i) allReduce.prepare(t, op, count);
        calls.emplace_back(t, op, count);
      }
      for (size_t l = 0; l < 3; ++l) calls.emplace_back(largeTypes[l], RedOp::kSum, largeCounts[l]);
      allReduce.settle(calls);
      before = Resources::sample();
    }
    auto [t, op, count] = smallCall(i);
    allReduce.run(t, op, count, i % 3 == 0, "small allreduce #" + std::to_string(i));
    if (largeDone < large && i % largeEvery == largeEvery - 1) {
      DataType lt = largeTypes[largeDone % 3];
      size_t lc = largeCounts[largeDone % 3];
      allReduce.run(lt, largeDone % 2 == 0 ? RedOp::kSum : RedOp::kMax, lc, largeDone % 2 == 1,
                    "large allreduce #" + std::to_string(largeDone));
      ok(hoopBarrier(comm, nullptr), comm, "barrier after large #" + std::to_string(largeDone));
      ++largeDone;
    }
  }
  Resources after = Resources::sample();
  report("soak", before, after);
  if (after.fds != before.fds || after.threads != before.threads) {
    die("soak: open fds or threads changed: before " + before.describe() + "; after " +
        after.describe());
  }
  expectMemoryWithin("soak", before, after, bounds);
}

// `cycles` communicators created and destroyed on top of a long-lived one that hands out each
// cycle's unique id; each inner communicator runs one allreduce. Resources are compared between
// the end of the warm-up cycles and the end.
void cycles(hoopComm_t outer, size_t count, const MemoryBounds& bounds) {
  const size_t warmUp = std::min<size_t>(20, count / 2);
  Resources before;
  for (size_t cycle = 0; cycle < count; ++cycle) {
    if (cycle == warmUp) before = Resources::sample();
    hoopUniqueId id{};
    if (rank == 0) ok(hoopGetUniqueId(&id), outer, "hoopGetUniqueId");
    ok(hoopBroadcast(&id, &id, sizeof(id), hoopUint8, 0, outer, nullptr), outer, "broadcast id");
    hoopComm_t inner = nullptr;
    const std::string what = "cycle " + std::to_string(cycle);
    ok(hoopCommInitRank(&inner, nranks, id, rank), nullptr, what + " hoopCommInitRank");
    int64_t value = rank + 1;
    ok(hoopAllReduce(&value, &value, 1, hoopInt64, hoopSum, inner, nullptr), inner,
       what + " allreduce");
    if (value != static_cast<int64_t>(nranks) * (nranks + 1) / 2) die(what + ": wrong sum");
    ok(hoopCommDestroy(inner), nullptr, what + " hoopCommDestroy");
  }
  ok(hoopBarrier(outer, nullptr), outer, "final barrier");
  expectSameHandles(before, "cycles");
  Resources after = Resources::sample();
  report("cycles", before, after);
  expectMemoryWithin("cycles", before, after, bounds);
}

// Rank 0 calls an allreduce that rank 1 never joins and aborts it from another thread; after
// destroy, rank 0's fds, threads and shm mappings are back where they were before init.
void abortWhilePeerAbsent(const Resources& beforeInit, hoopComm_t comm) {
  if (rank == 0) {
    std::thread aborter([comm] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      hoopCommAbort(comm);
    });
    int32_t data[16] = {};
    hoopResult_t result = hoopAllReduce(data, data, 16, hoopInt32, hoopSum, comm, nullptr);
    aborter.join();
    if (result == hoopSuccess) die("an allreduce rank 1 never joined succeeded");
    std::printf("rank 0 aborted: %s: %s\n", hoopGetErrorString(result), hoopGetLastError(comm));
  } else {
    // Stay alive until rank 0 is done, so what rank 0 sees is the abort and not our exit.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  }
  hoopCommDestroy(comm);
  expectSameHandles(beforeInit, "after abort and destroy");
  report("abort", beforeInit, Resources::sample());
}

// The last rank dies (SIGKILL) after one good allreduce; the others' next allreduce must fail,
// and after destroy their fds, threads and shm mappings are back where they were before init.
void peerFailure(const Resources& beforeInit, hoopComm_t comm) {
  CheckedAllReduce allReduce(comm);
  allReduce.run(DataType::kInt32, RedOp::kSum, 1000, false, "allreduce before the failure");
  if (rank == nranks - 1) raise(SIGKILL);
  std::vector<int32_t> data(1 << 16);
  hoopResult_t result =
      hoopAllReduce(data.data(), data.data(), data.size(), hoopInt32, hoopSum, comm, nullptr);
  if (result == hoopSuccess) die("an allreduce with a dead rank succeeded");
  std::printf("rank %d saw the failure: %s: %s\n", rank, hoopGetErrorString(result),
              hoopGetLastError(comm));
  hoopCommDestroy(comm);
  expectSameHandles(beforeInit, "after peer failure and destroy");
  report("peer-failure", beforeInit, Resources::sample());
}

// Allreduces until one fails (a rank was killed), then prints when and why and exits 2. With
// --suicide-rank R, rank R kills itself with SIGKILL after 50 rounds (for runs under hooprun).
[[noreturn]] void killLoop(hoopComm_t comm, int suicideRank) {
  std::vector<int32_t> data(16384);
  for (size_t round = 0;; ++round) {
    if (round == 50 && rank == suicideRank) raise(SIGKILL);
    if (round == 20) {
      std::printf("LOOPING rank %d\n", rank);
      std::fflush(stdout);
    }
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int32_t>(i % 1000) + rank;
    hoopResult_t result =
        hoopAllReduce(data.data(), data.data(), data.size(), hoopInt32, hoopSum, comm, nullptr);
    if (result != hoopSuccess) {
      const int64_t at = monotonicMicros();
      std::printf("ERROR rank %d at %lld us: %s: %s\n", rank, static_cast<long long>(at),
                  resultName(result), hoopGetLastError(comm));
      std::fflush(stdout);
      hoopCommDestroy(comm);
      std::exit(2);
    }
    for (size_t i = 0; i < data.size(); ++i) {
      const int32_t want = nranks * static_cast<int32_t>(i % 1000) + nranks * (nranks - 1) / 2;
      if (data[i] != want) die("kill-loop round " + std::to_string(round) + ": wrong result");
    }
  }
}

// Rank 0 and the last rank make different calls (what differs: `what`); the ranks between make
// rank 0's call. Prints what hoop returned ("MISMATCH rank R: <code>: <message>"; for a rank
// whose call succeeded, what its next call returned) for the test to judge.
void mismatch(hoopComm_t comm, const std::string& what) {
  const bool odd = rank == nranks - 1;
  size_t count = 1024;
  hoopDataType_t type = hoopInt32;
  hoopRedOp_t op = hoopSum;
  int root = 0;
  if (odd && what == "count") count = 1000;
  if (odd && what == "dtype") type = hoopInt64;
  if (odd && what == "op") op = hoopMax;
  if (odd && what == "root") root = 1;
  std::vector<int64_t> buffer(count * static_cast<size_t>(nranks), rank + 1);
  hoopResult_t result;
  if (what == "root") {
    result = hoopBroadcast(buffer.data(), buffer.data(), count, type, root, comm, nullptr);
  } else if (what == "kind" && odd) {
    result = hoopBroadcast(buffer.data(), buffer.data(), count, type, root, comm, nullptr);
  } else {
    result = hoopAllReduce(buffer.data(), buffer.data(), count, type, op, comm, nullptr);
  }
  if (result == hoopSuccess) {
    // Its part of the call was done before anything went wrong (a broadcast root's sends): the
    // failure notice of a rank that found the mismatch fails the communicator afterwards, as
    // hoopCommGetAsyncError says. Asked for HOOP_TEST_LINGER_MS, then this rank exits.
    std::printf("FIRST CALL rank %d: hoopSuccess\n", rank);
    const char* linger = std::getenv("HOOP_TEST_LINGER_MS");
    const int lingerMs = linger == nullptr ? 0 : std::atoi(linger);
    for (int waited = 0; waited < lingerMs && result == hoopSuccess; waited += 10) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (hoopCommGetAsyncError(comm, &result) != hoopSuccess) die("hoopCommGetAsyncError");
    }
  }
  std::printf("MISMATCH rank %d: %s: %s\n", rank, resultName(result), hoopGetLastError(comm));
  std::fflush(stdout);
  hoopCommDestroy(comm);
  std::exit(0);  // the test reads the verdict
}

}  // namespace

int main(int argc, char** argv) {
  std::string init = "uid";
  std::string suite;
  std::string what;
  size_t small = 10000;
  size_t large = 100;
  size_t count = 1000;
  MemoryBounds bounds{64, 1024};
  int suicideRank = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) die("missing value after " + arg);
      return std::string(argv[++i]);
    };
    if (arg == "--init")
      init = next();
    else if (arg == "--suite")
      suite = next();
    else if (arg == "--what")
      what = next();
    else if (arg == "--small")
      small = std::stoul(next());
    else if (arg == "--large")
      large = std::stoul(next());
    else if (arg == "--cycles")
      count = std::stoul(next());
    else if (arg == "--heap-bound-kib")
      bounds.heapKib = std::stoul(next());
    else if (arg == "--anon-bound-kib")
      bounds.anonKib = std::stoul(next());
    else if (arg == "--suicide-rank")
      suicideRank = std::stoi(next());
    else
      die("unknown argument " + arg);
  }
  // Sampled before anything of hoop's exists, for the suites that destroy their communicator.
  const Resources beforeInit = Resources::sample();
  hoopComm_t comm = join(init);
  if (suite == "soak") {
    soak(comm, small, large, bounds);
  } else if (suite == "cycles") {
    cycles(comm, count, bounds);
  } else if (suite == "abort") {
    abortWhilePeerAbsent(beforeInit, comm);
    std::printf("OK rank %d\n", rank);
    return 0;
  } else if (suite == "peer-failure") {
    peerFailure(beforeInit, comm);
    std::printf("OK rank %d\n", rank);
    return 0;
  } else if (suite == "kill-loop") {
    killLoop(comm, suicideRank);
  } else if (suite == "mismatch") {
    mismatch(comm, what);
  } else {
    die("unknown suite " + suite);
  }
  ok(hoopCommDestroy(comm), nullptr, "destroy");
  std::printf("OK rank %d of %d\n", rank, nranks);
  return 0;
}
