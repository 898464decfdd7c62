// One rank of the hoopCommInitRankConfig tests: non-blocking communicators driven through the
// public C API, polled with hoopCommGetAsyncError, results compared exactly. Exits 0 only if
// everything held; failures print what and where.
//
//   hoop_config_worker MODE     (HOOP_TEST_UID, HOOP_TEST_RANK, HOOP_TEST_NRANKS in the env)
// MODE: loop | mismatch | deadpeer | abort | abortinit | idle
#include <dirent.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"
#include "worker_support.h"

namespace {

int rank = -1;
int nranks = 0;
hoopComm_t comm = nullptr;

[[noreturn]] void die(const std::string& message) { hoop::test::failRank(rank, message); }

void expect(hoopResult_t got, hoopResult_t want, const std::string& what) {
  if (got != want) {
    die(what + ": got " + hoopGetErrorString(got) + ", expected " + hoopGetErrorString(want) +
        ": " + hoopGetLastError(comm));
  }
}

// Threads of this process: every one hoop started must be gone after destroy or abort.
int threadCount() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) die("cannot open /proc/self/task");
  int count = 0;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

// Polls until the queued work is done; the whole test is bounded by the test's deadline.
hoopResult_t pollUntilDone() {
  while (true) {
    hoopResult_t state = hoopInProgress;
    expect(hoopCommGetAsyncError(comm, &state), hoopSuccess, "hoopCommGetAsyncError");
    if (state != hoopInProgress) return state;
    std::this_thread::yield();
  }
}

hoopResult_t initNonBlocking(int timeoutSeconds) {
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.timeoutSeconds = timeoutSeconds;
  config.initTimeoutSeconds = 20;
  return hoopCommInitRankConfig(&comm, nranks, hoop::test::testUniqueId(rank), rank, &config);
}

void compare(const std::vector<int32_t>& got, const std::vector<int32_t>& want,
             const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] != want[i]) {
      die(what + ": element " + std::to_string(i) + " is " + std::to_string(got[i]) +
          ", expected " + std::to_string(want[i]));
    }
  }
}

int32_t valueOf(int r, size_t i, int iteration) {
  return static_cast<int32_t>((r + 1) * 1000 + static_cast<int>(i % 97) + iteration);
}

// New schedule rules, allreduce, broadcast, a ring exchange in a group and a barrier, queued back
// to back many times and polled once per round; the last round is left to hoopCommDestroy to
// finish.
void loop() {
  const size_t count = 1031;
  const int rounds = 20;
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  for (int round = 0; round <= rounds; ++round) {
    std::vector<int32_t> sum(count);
    std::vector<int32_t> broadcast(count, -1);
    std::vector<int32_t> toNext(count);
    std::vector<int32_t> fromPrev(count, -1);
    for (size_t i = 0; i < count; ++i) {
      sum[i] = valueOf(rank, i, round);
      toNext[i] = valueOf(rank, i, round);
      if (rank == round % nranks) broadcast[i] = valueOf(rank, i, -round);
    }
    // Queued like the calls: each round's collectives run under other rules than the last's.
    const char* const rules[] = {"allreduce:=recdoubling;broadcast:=tree", "allreduce:=direct", ""};
    expect(hoopCommSetAlgorithms(comm, rules[round % 3]), hoopInProgress, "hoopCommSetAlgorithms");
    expect(hoopAllReduce(sum.data(), sum.data(), count, hoopInt32, hoopSum, comm, nullptr),
           hoopInProgress, "hoopAllReduce");
    expect(hoopBroadcast(broadcast.data(), broadcast.data(), count, hoopInt32, round % nranks, comm,
                         nullptr),
           hoopInProgress, "hoopBroadcast");
    expect(hoopGroupStart(), hoopSuccess, "hoopGroupStart");
    expect(hoopSend(toNext.data(), count, hoopInt32, next, comm, nullptr), hoopSuccess, "hoopSend");
    expect(hoopRecv(fromPrev.data(), count, hoopInt32, prev, comm, nullptr), hoopSuccess,
           "hoopRecv");
    expect(hoopGroupEnd(), hoopInProgress, "hoopGroupEnd");
    expect(hoopBarrier(comm, nullptr), hoopInProgress, "hoopBarrier");
    if (round == rounds) {
      expect(hoopCommDestroy(comm), hoopSuccess, "hoopCommDestroy with work queued");
      comm = nullptr;
    } else {
      expect(pollUntilDone(), hoopSuccess, "round " + std::to_string(round));
    }
    std::vector<int32_t> wantSum(count);
    std::vector<int32_t> wantBroadcast(count);
    std::vector<int32_t> wantFromPrev(count);
    for (size_t i = 0; i < count; ++i) {
      for (int r = 0; r < nranks; ++r) wantSum[i] += valueOf(r, i, round);
      wantBroadcast[i] = valueOf(round % nranks, i, -round);
      wantFromPrev[i] = valueOf(prev, i, round);
    }
    const std::string what = "round " + std::to_string(round);
    compare(sum, wantSum, what + " allreduce");
    compare(broadcast, wantBroadcast, what + " broadcast");
    compare(fromPrev, wantFromPrev, what + " send/recv from rank " + std::to_string(prev));
  }
}

// Ranks disagree on the count: the error comes through hoopCommGetAsyncError, names the
// operation and the peer, and sticks.
void mismatch() {
  std::vector<float> data(rank == 0 ? 10 : 20, 1.0f);
  expect(hoopAllReduce(data.data(), data.data(), data.size(), hoopFloat32, hoopSum, comm, nullptr),
         hoopInProgress, "hoopAllReduce");
  expect(pollUntilDone(), hoopInvalidUsage, "mismatched allreduce");
  const std::string message = hoopGetLastError(comm);
  const std::string peer = rank == 0 ? "rank 1" : "rank 0";
  if (message.find("allreduce #0") == std::string::npos ||
      message.find(peer) == std::string::npos) {
    die("the message does not name the operation and " + peer + ": " + message);
  }
  expect(hoopBarrier(comm, nullptr), hoopInvalidUsage, "a call after the failure");
  if (std::string(hoopGetLastError(comm)).find("failed earlier") == std::string::npos) {
    die(std::string("the later call does not say the communicator failed: ") +
        hoopGetLastError(comm));
  }
  hoopResult_t state = hoopSuccess;
  expect(hoopCommGetAsyncError(comm, &state), hoopSuccess, "hoopCommGetAsyncError");
  expect(state, hoopInvalidUsage, "the state after the failure");
}

// Rank 1 leaves right after initialisation; rank 0's queued allreduce fails naming it.
void deadPeer() {
  if (rank == 1) return;
  float value = 1;
  expect(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, comm, nullptr), hoopInProgress,
         "hoopAllReduce");
  const hoopResult_t state = pollUntilDone();
  if (state != hoopRemoteError && state != hoopTimeout) {
    die(std::string("expected a remote error or a timeout, got ") + hoopGetErrorString(state));
  }
  if (std::string(hoopGetLastError(comm)).find("rank 1") == std::string::npos) {
    die(std::string("the message does not name rank 1: ") + hoopGetLastError(comm));
  }
}

// Aborts `comm` from another thread and checks that it comes back soon (a hang guard, not a
// performance check: the promise is 100 ms).
void abortFromAnotherThread(const char* what) {
  const auto start = std::chrono::steady_clock::now();
  auto aborted = std::async(std::launch::async, [] { return hoopCommAbort(comm); });
  if (aborted.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    die(std::string("hoopCommAbort did not return within 2 s ") + what);
  }
  expect(aborted.get(), hoopSuccess, "hoopCommAbort");
  const auto took = std::chrono::steady_clock::now() - start;
  std::printf(
      "abort %s returned after %lld ms\n", what,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  comm = nullptr;
}

// Rank 0 queues an allreduce rank 1 never joins, then aborts it.
void abortQueued() {
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(1));  // alive, but never calls
    return;
  }
  float value = 1;
  expect(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, comm, nullptr), hoopInProgress,
         "hoopAllReduce");
  expect(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, comm, nullptr), hoopInProgress,
         "a second hoopAllReduce, queued behind the first");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  hoopResult_t state = hoopSuccess;
  expect(hoopCommGetAsyncError(comm, &state), hoopSuccess, "hoopCommGetAsyncError");
  expect(state, hoopInProgress, "the state while the peer is away");
  abortFromAnotherThread("on a queued allreduce");
}

// Initialisation waits for a rank that never comes: queries say hoopInProgress, operations are
// refused, and abort ends it.
void abortInit() {
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  hoopResult_t state = hoopSuccess;
  expect(hoopCommGetAsyncError(comm, &state), hoopSuccess, "hoopCommGetAsyncError");
  expect(state, hoopInProgress, "the state while a rank is missing");
  int count = -1;
  expect(hoopCommCount(comm, &count), hoopInProgress, "hoopCommCount while initialising");
  float value = 1;
  expect(hoopAllReduce(&value, &value, 1, hoopFloat32, hoopSum, comm, nullptr), hoopInvalidUsage,
         "hoopAllReduce while initialising");
  abortFromAnotherThread("during initialisation");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) die("usage: hoop_config_worker MODE");
  const std::string mode = argv[1];
  rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
  nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
  // ThreadSanitizer starts a thread of its own at the first thread created: let that happen
  // before counting.
  std::thread([] {}).join();
  const int threadsBefore = threadCount();
  expect(initNonBlocking(mode == "deadpeer" ? 5 : 30), hoopInProgress, "hoopCommInitRankConfig");
  if (comm == nullptr) die("no handle from a non-blocking init");
  if (mode != "abortinit") {
    expect(pollUntilDone(), hoopSuccess, "initialisation");
    int count = 0;
    expect(hoopCommCount(comm, &count), hoopSuccess, "hoopCommCount");
    if (count != nranks) die("hoopCommCount says " + std::to_string(count));
  }
  if (mode == "loop")
    loop();
  else if (mode == "mismatch")
    mismatch();
  else if (mode == "deadpeer")
    deadPeer();
  else if (mode == "abort")
    abortQueued();
  else if (mode == "abortinit")
    abortInit();
  else
    die("unknown mode " + mode);
  if (comm != nullptr) expect(hoopCommDestroy(comm), hoopSuccess, "hoopCommDestroy");
  const int threadsAfter = threadCount();
  if (threadsAfter != threadsBefore) {
    die("threads: " + std::to_string(threadsBefore) + " before, " + std::to_string(threadsAfter) +
        " after destroy or abort");
  }
  std::printf("OK rank %d of %d\n", rank, nranks);
  return 0;
}
