// One rank of a multi-process test. Started N times by the tests (directly, through hooprun or
// mpirun, or with torchrun's variables); runs a suite against the public C API and exits 0 only
// if every result was exactly right. Failures print what, where and which element.
//
//   hoop_test_worker --init uid|env --suite sweep|random|p2p|barrier|loop|set-algorithms|
//                    set-algorithms-mismatch|drift [--large] [--out-of-place] [--seconds S]
//                    [--count N] [--until-settled] [--drift-calls N]
// The sweep suite runs every collective, type, op and count in place and out of place; with
// --out-of-place, out of place only (where a test has checked in-place calls at other rank counts).
// The loop suite runs allreduces of N floats for S seconds (forever without --seconds), for the
// fault tests: they stop, kill or cut off a rank while it runs. With --until-settled it also runs
// on past S until the timed choice for N floats has settled (at most kMostLoopSeconds), so that a
// slow build (sanitizers, a loaded machine) still sees the trial through.
// The set-algorithms suites switch schedules with hoopCommSetAlgorithms between allreduces of N
// floats; in the mismatch one rank 1 passes other rules than the rest, and every rank must get
// hoopInvalidUsage naming it.
// The drift suite slows the last rank down once allreduces of N floats have settled, for at most
// --drift-calls calls, and reports whether and when the class was timed again.
// With --init uid, HOOP_TEST_UID (hex unique id), HOOP_TEST_RANK and HOOP_TEST_NRANKS are read.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"
#include "reference.h"
#include "worker_support.h"

namespace {

using hoop::DataType;
using hoop::RedOp;
using hoop::test::makeExpected;
using hoop::test::makeInput;

int rank = -1;
int nranks = 0;
hoopComm_t comm = nullptr;
size_t checks = 0;

[[noreturn]] void die(const std::string& message) { hoop::test::failRank(rank, message); }

void ok(hoopResult_t result, const std::string& what) {
  if (result != hoopSuccess) {
    die(what + ": " + hoopGetErrorString(result) + ": " + hoopGetLastError(comm));
  }
}

std::string describe(const char* call, DataType t, RedOp op, size_t count, bool inPlace) {
  return std::string(call) + " " + std::string(hoop::dataTypeName(t)) + " " +
         std::string(hoop::redOpName(op)) + " count=" + std::to_string(count) +
         (inPlace ? " in-place" : " out-of-place");
}

void compare(const std::vector<char>& expected, const char* actual, DataType t,
             const std::string& what) {
  const size_t size = hoop::dataTypeSize(t);
  for (size_t i = 0; i * size < expected.size(); ++i) {
    if (std::memcmp(expected.data() + i * size, actual + i * size, size) != 0) {
      uint64_t want = 0;
      uint64_t got = 0;
      std::memcpy(&want, expected.data() + i * size, size);
      std::memcpy(&got, actual + i * size, size);
      die(what + ": element " + std::to_string(i) + " expected bits 0x" + std::to_string(want) +
          " got 0x" + std::to_string(got));
    }
  }
  ++checks;
}

std::vector<size_t> sweepCounts(bool large) {
  std::vector<size_t> counts = {0,
                                1,
                                static_cast<size_t>(nranks - 1 > 0 ? nranks - 1 : 2),
                                static_cast<size_t>(nranks + 1),
                                7,
                                13,
                                1031,
                                65537};
  if (large) counts.push_back(1000007);
  return counts;
}

void allReduceCase(DataType t, RedOp op, size_t count, bool inPlace) {
  auto input = makeInput(t, op, rank, nranks, count);
  auto expected = makeExpected(t, op, nranks, count);
  std::vector<char> output(input.size() + 1, 0x5a);
  const void* send = inPlace ? output.data() : input.data();
  if (inPlace && !input.empty()) std::memcpy(output.data(), input.data(), input.size());
  std::string what = describe("allreduce", t, op, count, inPlace);
  ok(hoopAllReduce(send, output.data(), count, static_cast<hoopDataType_t>(t),
                   static_cast<hoopRedOp_t>(op), comm, nullptr),
     what);
  compare(expected, output.data(), t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void reduceCase(DataType t, RedOp op, size_t count, bool inPlace, int root) {
  auto input = makeInput(t, op, rank, nranks, count);
  auto expected = makeExpected(t, op, nranks, count);
  std::vector<char> output(input.size() + 1, 0x5a);
  const void* send = inPlace ? output.data() : input.data();
  if (inPlace && !input.empty()) std::memcpy(output.data(), input.data(), input.size());
  std::string what = describe("reduce", t, op, count, inPlace) + " root=" + std::to_string(root);
  ok(hoopReduce(send, output.data(), count, static_cast<hoopDataType_t>(t),
                static_cast<hoopRedOp_t>(op), root, comm, nullptr),
     what);
  if (rank == root) compare(expected, output.data(), t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void broadcastCase(DataType t, size_t count, bool inPlace, int root) {
  auto data = makeInput(t, RedOp::kSum, root, nranks, count);
  std::vector<char> output(data.size() + 1, 0x5a);
  std::vector<char> send = rank == root ? data : std::vector<char>(data.size(), 0);
  if (inPlace && rank == root && !data.empty()) {
    std::memcpy(output.data(), data.data(), data.size());
  }
  std::string what =
      describe("broadcast", t, RedOp::kSum, count, inPlace) + " root=" + std::to_string(root);
  ok(hoopBroadcast(inPlace ? output.data() : send.data(), output.data(), count,
                   static_cast<hoopDataType_t>(t), root, comm, nullptr),
     what);
  compare(data, output.data(), t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void allGatherCase(DataType t, size_t count, bool inPlace) {
  const size_t size = hoop::dataTypeSize(t);
  std::vector<char> expected;
  for (int r = 0; r < nranks; ++r) {
    auto block = makeInput(t, RedOp::kSum, r, nranks, count, 17 * static_cast<size_t>(r));
    expected.insert(expected.end(), block.begin(), block.end());
  }
  auto mine = makeInput(t, RedOp::kSum, rank, nranks, count, 17 * static_cast<size_t>(rank));
  std::vector<char> output(expected.size() + 1, 0x5a);
  char* myBlock = output.data() + static_cast<size_t>(rank) * count * size;
  if (inPlace && !mine.empty()) std::memcpy(myBlock, mine.data(), mine.size());
  std::string what = describe("allgather", t, RedOp::kSum, count, inPlace);
  ok(hoopAllGather(inPlace ? myBlock : mine.data(), output.data(), count,
                   static_cast<hoopDataType_t>(t), comm, nullptr),
     what);
  compare(expected, output.data(), t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void reduceScatterCase(DataType t, RedOp op, size_t count, bool inPlace) {
  const size_t size = hoop::dataTypeSize(t);
  const size_t total = count * static_cast<size_t>(nranks);
  auto input = makeInput(t, op, rank, nranks, total);
  auto expected = makeExpected(t, op, nranks, count, static_cast<size_t>(rank) * count);
  std::vector<char> output(count * size + 1, 0x5a);
  std::string what = describe("reducescatter", t, op, count, inPlace);
  char* result = output.data();
  if (inPlace) result = input.data() + static_cast<size_t>(rank) * count * size;
  ok(hoopReduceScatter(input.data(), result, count, static_cast<hoopDataType_t>(t),
                       static_cast<hoopRedOp_t>(op), comm, nullptr),
     what);
  compare(expected, result, t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void allToAllCase(DataType t, size_t count, bool inPlace) {
  const auto [input, expected] = hoop::test::makeAllToAll(t, rank, nranks, count);
  std::vector<char> output(input.size() + 1, 0x5a);
  if (inPlace && !input.empty()) std::memcpy(output.data(), input.data(), input.size());
  std::string what = describe("alltoall", t, RedOp::kSum, count, inPlace);
  ok(hoopAllToAll(inPlace ? output.data() : input.data(), output.data(), count,
                  static_cast<hoopDataType_t>(t), comm, nullptr),
     what);
  compare(expected, output.data(), t, what);
  if (output.back() != 0x5a) die(what + ": wrote past the end of recvbuff");
}

void sweep(bool large, bool outOfPlaceOnly, const std::string& only) {
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  for (size_t count : sweepCounts(large)) {
    for (int ti = 0; ti < hoop::kNumDataTypes; ++ti) {
      auto t = static_cast<DataType>(ti);
      for (int inPlace = 0; inPlace < (outOfPlaceOnly ? 1 : 2); ++inPlace) {
        for (int oi = 0; oi < hoop::kNumRedOps; ++oi) {
          auto op = static_cast<RedOp>(oi);
          // The million-element count exercises pipelining, which does not depend on the
          // element type or op: every type with sum, every op with int32 and float.
          if (count > 100000 && op != RedOp::kSum && t != DataType::kInt32 &&
              t != DataType::kFloat32) {
            continue;
          }
          if (wanted("allreduce")) allReduceCase(t, op, count, inPlace);
          if (wanted("reduce")) reduceCase(t, op, count, inPlace, (oi + ti) % nranks);
          // The large count is split across ranks for the blocked collectives.
          size_t blockCount = count > 100000 ? count / static_cast<size_t>(nranks) + 1 : count;
          if (wanted("reducescatter")) reduceScatterCase(t, op, blockCount, inPlace);
        }
        size_t blockCount = count > 100000 ? count / static_cast<size_t>(nranks) + 1 : count;
        if (wanted("broadcast")) broadcastCase(t, count, inPlace, (ti + 1) % nranks);
        if (wanted("allgather")) allGatherCase(t, blockCount, inPlace);
        if (wanted("alltoall")) allToAllCase(t, blockCount, inPlace);
      }
    }
  }
}

// Random (non-integer) floats: every rank must end with the same bits.
void randomIdentical() {
  std::mt19937_64 generator(1234 + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const DataType types[] = {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16,
                            DataType::kBfloat16};
  for (DataType t : types) {
    for (size_t count : {size_t{3}, size_t{4099}, size_t{300007}}) {
      for (RedOp op : {RedOp::kSum, RedOp::kAvg, RedOp::kProd}) {
        const size_t size = hoop::dataTypeSize(t);
        std::vector<char> input(count * size);
        for (size_t i = 0; i < count; ++i) {
          float value = uniform(generator);
          if (t == DataType::kFloat32) std::memcpy(input.data() + i * 4, &value, 4);
          if (t == DataType::kFloat64) {
            double d = value / 3.0;
            std::memcpy(input.data() + i * 8, &d, 8);
          }
          if (t == DataType::kFloat16) {
            uint16_t h = hoop::floatToHalf(value);
            std::memcpy(input.data() + i * 2, &h, 2);
          }
          if (t == DataType::kBfloat16) {
            uint16_t b = hoop::floatToBf16(value);
            std::memcpy(input.data() + i * 2, &b, 2);
          }
        }
        std::vector<char> output(input.size());
        std::string what = describe("allreduce(random)", t, op, count, false);
        ok(hoopAllReduce(input.data(), output.data(), count, static_cast<hoopDataType_t>(t),
                         static_cast<hoopRedOp_t>(op), comm, nullptr),
           what);
        uint64_t mine = hoop::test::fingerprint(output);
        std::vector<uint64_t> all(static_cast<size_t>(nranks));
        ok(hoopAllGather(&mine, all.data(), 1, hoopUint64, comm, nullptr), "allgather");
        for (int r = 0; r < nranks; ++r) {
          if (all[r] != all[0]) {
            die(what + ": rank " + std::to_string(r) + "'s result differs from rank 0's");
          }
        }
        ++checks;
      }
    }
  }
}

void p2p() {
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  // A ring shift in one group, for several sizes (the large one spans many pieces).
  for (size_t count : {size_t{0}, size_t{1}, size_t{1000}, size_t{700001}}) {
    auto send = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count, 3);
    std::vector<char> recv(send.size(), 0);
    ok(hoopGroupStart(), "group start");
    ok(hoopSend(send.data(), count, hoopInt32, next, comm, nullptr), "send");
    ok(hoopRecv(recv.data(), count, hoopInt32, prev, comm, nullptr), "recv");
    ok(hoopGroupEnd(), "ring shift of " + std::to_string(count));
    compare(makeInput(DataType::kInt32, RedOp::kSum, prev, nranks, count, 3), recv.data(),
            DataType::kInt32, "ring shift count=" + std::to_string(count));
  }
  // Everyone to everyone, self included, in one group.
  const size_t count = 513;
  std::vector<std::vector<char>> received(static_cast<size_t>(nranks));
  auto mine = makeInput(DataType::kFloat64, RedOp::kMax, rank, nranks, count);
  ok(hoopGroupStart(), "group start");
  for (int peer = 0; peer < nranks; ++peer) {
    received[peer].assign(mine.size(), 0);
    ok(hoopRecv(received[peer].data(), count, hoopFloat64, peer, comm, nullptr), "recv");
    ok(hoopSend(mine.data(), count, hoopFloat64, peer, comm, nullptr), "send");
  }
  ok(hoopGroupEnd(), "all-to-all group");
  for (int peer = 0; peer < nranks; ++peer) {
    compare(makeInput(DataType::kFloat64, RedOp::kMax, peer, nranks, count), received[peer].data(),
            DataType::kFloat64, "all-to-all from " + std::to_string(peer));
  }
  // Blocking calls outside a group: rank 0 sends a small message to each rank in turn.
  if (rank == 0) {
    for (int peer = 1; peer < nranks; ++peer) {
      int64_t value = 1000 + peer;
      ok(hoopSend(&value, 1, hoopInt64, peer, comm, nullptr), "blocking send");
    }
  } else {
    int64_t value = 0;
    ok(hoopRecv(&value, 1, hoopInt64, 0, comm, nullptr), "blocking recv");
    if (value != 1000 + rank) die("blocking recv got " + std::to_string(value));
    ++checks;
  }
}

// Ranks arrive at the barrier at staggered times; no rank may leave before the last arrival.
// Times come from CLOCK_MONOTONIC, which all processes on a machine share.
void barrier() {
  auto nowUs = [] {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
  };
  for (int round = 0; round < 3; ++round) {
    ok(hoopBarrier(comm, nullptr), "barrier");
    std::this_thread::sleep_for(std::chrono::milliseconds(20 * ((rank + round) % nranks)));
    int64_t arrived = nowUs();
    ok(hoopBarrier(comm, nullptr), "barrier");
    int64_t left = nowUs();
    std::vector<int64_t> arrivals(static_cast<size_t>(nranks));
    ok(hoopAllGather(&arrived, arrivals.data(), 1, hoopInt64, comm, nullptr), "allgather");
    for (int r = 0; r < nranks; ++r) {
      if (left < arrivals[r]) {
        die("barrier round " + std::to_string(round) + " returned " +
            std::to_string(arrivals[r] - left) + " us before rank " + std::to_string(r) +
            " arrived");
      }
    }
    ++checks;
  }
}

// The longest --until-settled waits for the trial; a test reading the log then fails on the
// missing settlement rather than hanging.
constexpr double kMostLoopSeconds = 120;

// Allreduces until every rank has run `seconds` (they agree on when by a max over their clocks
// every few rounds, so all make the same calls) and, with `untilSettled`, the schedule for
// `count` floats has settled. Exact integer sums, checked every round.
void loop(double seconds, size_t count, bool untilSettled) {
  std::printf("LOOP rank %d pid %d\n", rank, static_cast<int>(getpid()));
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  std::vector<float> data(count);
  const float expected = static_cast<float>(nranks * (nranks + 1) / 2);
  for (size_t round = 0;; ++round) {
    std::fill(data.begin(), data.end(), static_cast<float>(rank + 1));
    ok(hoopAllReduce(data.data(), data.data(), count, hoopFloat32, hoopSum, comm, nullptr),
       "allreduce loop round " + std::to_string(round));
    if (count > 0 && (data.front() != expected || data.back() != expected)) {
      die("allreduce loop round " + std::to_string(round) + " gave a wrong sum");
    }
    ++checks;
    if (round % 16 != 15) continue;
    const std::chrono::duration<double> ran = std::chrono::steady_clock::now() - start;
    int settled = 1;
    if (untilSettled) {
      ok(hoopCommScheduleSettled(comm, hoopCollAllReduce, count, hoopFloat32, &settled),
         "hoopCommScheduleSettled");
    }
    const bool done = (ran.count() >= seconds && settled != 0) || ran.count() >= kMostLoopSeconds;
    // Every rank votes; the loop ends once any rank is done (settlement is agreed, so all see it
    // at the same round; the clocks differ).
    int32_t vote = done ? 1 : 0;
    ok(hoopAllReduce(&vote, &vote, 1, hoopInt32, hoopMax, comm, nullptr), "loop end vote");
    if (vote != 0) return;
  }
}

// One allreduce of `count` floats, each rank giving rank + 1, checked exactly.
void allReduceChecked(size_t count, const std::string& what) {
  std::vector<float> data(count, static_cast<float>(rank + 1));
  ok(hoopAllReduce(data.data(), data.data(), count, hoopFloat32, hoopSum, comm, nullptr), what);
  const float expected = static_cast<float>(nranks * (nranks + 1) / 2);
  for (size_t i = 0; i < count; ++i) {
    if (data[i] != expected) die(what + ": element " + std::to_string(i) + " is wrong");
  }
  ++checks;
}

// The watch over a settled class (schedule_trial.h's kDriftFactor). Allreduces of `count`
// floats until their class has settled; then the last rank sleeps kDriftSleepMs before each call,
// which stretches every other rank's call, until hoop says the class is no longer settled (its
// watch saw the drift and times it again) or `driftCalls` calls have run; then calls without the
// sleep until the class has settled again. Prints after how many calls the class started over,
// which the test compares across ranks and with HOOP_TUNE_WATCH. Exact sums every call.
constexpr int kDriftSleepMs = 20;
void drift(size_t count, size_t driftCalls) {
  const auto settled = [&] {
    int answer = 0;
    ok(hoopCommScheduleSettled(comm, hoopCollAllReduce, count, hoopFloat32, &answer),
       "hoopCommScheduleSettled");
    return answer != 0;
  };
  const auto untilSettled = [&](const std::string& what) {
    for (size_t call = 0; !settled(); ++call) {
      if (call == HOOP_MOST_CALLS_TO_SETTLE) die(what + ": not settled after that many calls");
      allReduceChecked(count, what + " call " + std::to_string(call));
    }
  };
  untilSettled("first trial");
  size_t calls = 0;
  for (; calls < driftCalls && settled(); ++calls) {
    if (rank == nranks - 1) std::this_thread::sleep_for(std::chrono::milliseconds(kDriftSleepMs));
    allReduceChecked(count, "drift call " + std::to_string(calls));
  }
  if (settled()) {
    std::printf("DRIFT rank %d: still settled after %zu calls\n", rank, calls);
    return;
  }
  std::printf("DRIFT rank %d: timed again after %zu calls\n", rank, calls);
  untilSettled("second trial");
  std::printf("DRIFT rank %d: settled again\n", rank);
}

// hoop's own choice for `count` floats, then each forced schedule in turn, then hoop's choice
// again: each call at the same size, so a choice remembered from the call before would show (the
// test reads which schedules the log says ran).
void setAlgorithms(size_t count) {
  allReduceChecked(count, "allreduce before any rules");
  for (const char* rules : {"allreduce:=recdoubling", "allreduce:=direct", ""}) {
    ok(hoopCommSetAlgorithms(comm, rules), std::string("hoopCommSetAlgorithms \"") + rules + "\"");
    const char* name = nullptr;
    ok(hoopCommScheduleName(comm, hoopCollAllReduce, count, hoopFloat32, &name),
       "hoopCommScheduleName");
    std::printf("rules \"%s\": %s\n", rules, name);
    allReduceChecked(count, std::string("allreduce under \"") + rules + "\"");
  }
}

void setAlgorithmsMismatch() {
  const char* rules = rank == 1 ? "allreduce:=direct" : "allreduce:=ring";
  const hoopResult_t result = hoopCommSetAlgorithms(comm, rules);
  const std::string message = hoopGetLastError(comm);
  if (result != hoopInvalidUsage) {
    die(std::string("mismatched hoopCommSetAlgorithms returned ") + hoopGetErrorString(result) +
        ": " + message);
  }
  if (message.find("rank 1 passed other rules than rank 0") == std::string::npos) {
    die("the mismatch's message does not name rank 1: " + message);
  }
  std::printf("mismatch: %s\n", message.c_str());
  ++checks;
}

}  // namespace

int main(int argc, char** argv) {
  std::string init = "env";
  std::string suite = "sweep";
  std::string only;
  bool large = false;
  bool outOfPlaceOnly = false;
  double seconds = 1e9;
  size_t count = 65536;
  bool untilSettled = false;
  size_t driftCalls = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--init" && i + 1 < argc)
      init = argv[++i];
    else if (arg == "--suite" && i + 1 < argc)
      suite = argv[++i];
    else if (arg == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (arg == "--large")
      large = true;
    else if (arg == "--out-of-place")
      outOfPlaceOnly = true;
    else if (arg == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (arg == "--count" && i + 1 < argc)
      count = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--until-settled")
      untilSettled = true;
    else if (arg == "--drift-calls" && i + 1 < argc)
      driftCalls = std::strtoull(argv[++i], nullptr, 10);
    else
      die("unknown argument " + arg);
  }
  if (init == "uid") {
    rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
    nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
    ok(hoopCommInitRank(&comm, nranks, hoop::test::testUniqueId(rank), rank), "hoopCommInitRank");
  } else {
    if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
      die(std::string("hoopCommInitFromEnv: ") + hoopGetLastError(nullptr));
    }
  }
  ok(hoopCommUserRank(comm, &rank), "rank");
  ok(hoopCommCount(comm, &nranks), "count");
  if (suite == "sweep")
    sweep(large, outOfPlaceOnly, only);
  else if (suite == "random")
    randomIdentical();
  else if (suite == "p2p")
    p2p();
  else if (suite == "barrier")
    barrier();
  else if (suite == "loop")
    loop(seconds, count, untilSettled);
  else if (suite == "set-algorithms")
    setAlgorithms(count);
  else if (suite == "set-algorithms-mismatch")
    setAlgorithmsMismatch();
  else if (suite == "drift")
    drift(count, driftCalls);
  else if (suite == "hello")
    ++checks;
  else
    die("unknown suite " + suite);
  ok(hoopCommDestroy(comm), "destroy");
  std::printf("OK rank %d of %d: %zu checks\n", rank, nranks, checks);
  return 0;
}
