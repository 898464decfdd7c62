// One rank of the multi-process tests of hoopCommSplit and the premultiplied sum, through the
// public C API; exits 0 only if every result was exactly right.
//
//   hoop_api_worker --init uid --suite split|refused|missing|premulsum [--nonblocking]
//
// split:     three splits of the job's communicator (several colors with keys that reverse the
//            order and a rank left out; pairs with equal keys; a split of the first split), each
//            new communicator checked by its size, ranks, an allreduce and an allgather of the
//            parent ranks it holds; then the parent is used again. --nonblocking makes the job's
//            communicator non-blocking (the first and third splits inherit it, the second asks
//            for a blocking one).
// refused:   rank 1 passes a color below HOOP_SPLIT_NOCOLOR: every rank must get
//            hoopInvalidArgument naming it, and the parent must still work and split.
// missing:   the last rank never calls hoopCommSplit: the others must fail within HOOP_TIMEOUT.
// premulsum: allreduce, reduce and reduce-scatter with premultiplied sums on host memory, every
//            datatype, each rank its own factor, by value and read at call time.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"
#include "premul_reference.h"
#include "worker_support.h"

namespace {

using hoop::DataType;

int rank = -1;
int nranks = 0;
hoopComm_t world = nullptr;
bool nonBlocking = false;
size_t checks = 0;

[[noreturn]] void die(const std::string& message) { hoop::test::failRank(rank, message); }

// Waits until `comm`'s queued work (or initialisation) has finished, when it is non-blocking.
void settle(hoopComm_t comm, const std::string& what) {
  while (true) {
    hoopResult_t state = hoopInProgress;
    if (hoopCommGetAsyncError(comm, &state) != hoopSuccess) {
      die(what + ": hoopCommGetAsyncError: " + hoopGetLastError(nullptr));
    }
    if (state == hoopSuccess) return;
    if (state != hoopInProgress) {
      die(what + ": " + hoopGetErrorString(state) + ": " + hoopGetLastError(comm));
    }
    std::this_thread::yield();
  }
}

// A call's result: success, or in progress on a non-blocking communicator (then waited for).
void ok(hoopResult_t result, hoopComm_t comm, const std::string& what) {
  if (result == hoopInProgress && comm != nullptr) {
    settle(comm, what);
    return;
  }
  if (result != hoopSuccess) {
    die(what + ": " + hoopGetErrorString(result) + ": " + hoopGetLastError(comm));
  }
}

void expectError(hoopResult_t result, hoopResult_t expected, hoopComm_t comm,
                 const std::vector<std::string>& mentions, const std::string& what) {
  const std::string message = hoopGetLastError(comm);
  if (result != expected) {
    die(what + ": got " + hoopGetErrorString(result) + ", expected " +
        hoopGetErrorString(expected) + ": " + message);
  }
  for (const std::string& word : mentions) {
    if (message.find(word) == std::string::npos) {
      die(what + ": the error does not mention '" + word + "': " + message);
    }
  }
  ++checks;
}

// ---- split ----

// A split as every rank computes it: each parent rank's color and key.
struct SplitSpec {
  std::string name;
  std::vector<int> colors;
  std::vector<int> keys;
};

// The parent ranks of `spec`'s group of `color`, in their new order (by key, then parent rank).
std::vector<int> membersOf(const SplitSpec& spec, int color) {
  std::vector<int> members;
  for (size_t r = 0; r < spec.colors.size(); ++r) {
    if (spec.colors[r] == color) members.push_back(static_cast<int>(r));
  }
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return spec.keys[static_cast<size_t>(a)] < spec.keys[static_cast<size_t>(b)];
  });
  return members;
}

// Checks the communicator `spec` gave this rank (`mine`, its rank `self` in the parent whose
// ranks are `parentRanks` in the job): size, rank, and collectives naming the job ranks it holds.
void checkSplit(const SplitSpec& spec, int self, const std::vector<int>& parentRanks,
                hoopComm_t mine) {
  const int color = spec.colors[static_cast<size_t>(self)];
  const std::string what = spec.name + " (color " + std::to_string(color) + ")";
  if (color == HOOP_SPLIT_NOCOLOR) {
    if (mine != nullptr) die(what + ": HOOP_SPLIT_NOCOLOR gave a communicator");
    ++checks;
    return;
  }
  if (mine == nullptr) die(what + ": no communicator");
  const std::vector<int> members = membersOf(spec, color);
  int size = 0;
  int newRank = -1;
  ok(hoopCommCount(mine, &size), nullptr, what + ": hoopCommCount");
  ok(hoopCommUserRank(mine, &newRank), nullptr, what + ": hoopCommUserRank");
  const auto expectedRank =
      static_cast<int>(std::find(members.begin(), members.end(), self) - members.begin());
  if (size != static_cast<int>(members.size()) || newRank != expectedRank) {
    die(what + ": rank " + std::to_string(newRank) + " of " + std::to_string(size) +
        ", expected rank " + std::to_string(expectedRank) + " of " +
        std::to_string(members.size()));
  }
  // Which job ranks sit where: an allgather of each member's job rank, in the new order.
  const int64_t jobRank = rank;
  std::vector<int64_t> gathered(members.size(), -1);
  ok(hoopAllGather(&jobRank, gathered.data(), 1, hoopInt64, mine, nullptr), mine,
     what + ": allgather");
  int64_t sum = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const int expected = parentRanks[static_cast<size_t>(members[i])];
    if (gathered[i] != expected) {
      die(what + ": new rank " + std::to_string(i) + " is job rank " + std::to_string(gathered[i]) +
          ", expected " + std::to_string(expected));
    }
    sum += (expected + 1) * (expected + 1);
  }
  // A sum over the members, of a size that takes a pipelined schedule's pieces.
  const size_t count = 70001;
  std::vector<int64_t> data(count, (jobRank + 1) * (jobRank + 1));
  ok(hoopAllReduce(data.data(), data.data(), count, hoopInt64, hoopSum, mine, nullptr), mine,
     what + ": allreduce");
  for (size_t i = 0; i < count; ++i) {
    if (data[i] != sum) {
      die(what + ": allreduce element " + std::to_string(i) + " is " + std::to_string(data[i]) +
          ", expected " + std::to_string(sum));
    }
  }
  checks += 2;
}

// Splits `parent` (this rank is `self` there; the parent's ranks are `parentRanks` in the job) as
// `spec` says, with `config`, and checks the result.
hoopComm_t split(hoopComm_t parent, int self, const std::vector<int>& parentRanks,
                 const SplitSpec& spec, hoopConfig_t* config = nullptr) {
  hoopComm_t mine = nullptr;
  const hoopResult_t result = hoopCommSplit(parent, spec.colors[static_cast<size_t>(self)],
                                            spec.keys[static_cast<size_t>(self)], &mine, config);
  if (result != hoopSuccess && result != hoopInProgress) {
    die(spec.name + ": hoopCommSplit: " + hoopGetErrorString(result) + ": " +
        hoopGetLastError(parent));
  }
  if (result == hoopInProgress) {
    settle(parent, spec.name + ": the parent's queue");
    if (mine != nullptr) settle(mine, spec.name + ": the new communicator's initialisation");
  }
  checkSplit(spec, self, parentRanks, mine);
  return mine;
}

void splitSuite() {
  std::vector<int> everyone;
  for (int r = 0; r < nranks; ++r) everyone.push_back(r);

  // Several colors, keys that reverse the order, and (from 5 ranks) rank 1 left out.
  SplitSpec colors{"split by colors", {}, {}};
  for (int r = 0; r < nranks; ++r) {
    int color = nranks == 2 ? 0 : r % (nranks >= 5 ? 3 : 2);
    if (nranks >= 5 && r == 1) color = HOOP_SPLIT_NOCOLOR;
    colors.colors.push_back(color);
    colors.keys.push_back(-r);
  }
  hoopComm_t byColor = split(world, rank, everyone, colors);

  // Pairs of neighbours, every key equal: the parent's order decides. Blocking, whatever the
  // parent is.
  SplitSpec pairs{"split into pairs", {}, {}};
  for (int r = 0; r < nranks; ++r) {
    pairs.colors.push_back(r / 2);
    pairs.keys.push_back(7);
  }
  hoopConfig_t blocking = HOOP_CONFIG_INITIALIZER;
  blocking.blocking = 1;
  hoopComm_t byPair = split(world, rank, everyone, pairs, &blocking);

  // A split of the first split: its ranks by parity of their rank there.
  if (byColor != nullptr) {
    const std::vector<int> parentRanks =
        membersOf(colors, colors.colors[static_cast<size_t>(rank)]);
    int self = -1;
    ok(hoopCommUserRank(byColor, &self), nullptr, "nested: rank");
    SplitSpec parity{"nested split", {}, {}};
    for (size_t r = 0; r < parentRanks.size(); ++r) {
      parity.colors.push_back(static_cast<int>(r % 2));
      parity.keys.push_back(static_cast<int>(r));
    }
    hoopComm_t nested = split(byColor, self, parentRanks, parity);
    ok(hoopCommDestroy(nested), nullptr, "nested: destroy");
  }

  // The communicators live side by side: each still serves calls, the parent too.
  if (byColor != nullptr) checkSplit(colors, rank, everyone, byColor);
  checkSplit(pairs, rank, everyone, byPair);
  SplitSpec whole{"the parent after the splits", std::vector<int>(everyone.size(), 0), everyone};
  checkSplit(whole, rank, everyone, world);
  if (byColor != nullptr) ok(hoopCommDestroy(byColor), nullptr, "destroy");
  ok(hoopCommDestroy(byPair), nullptr, "destroy");
}

void refusedSuite() {
  hoopComm_t mine = nullptr;
  const int color = rank == 1 ? -2 : 0;
  expectError(hoopCommSplit(world, color, 0, &mine, nullptr), hoopInvalidArgument, world,
              {"rank 1", "color -2"}, "a split where rank 1 passed color -2");
  if (mine != nullptr) die("a refused split gave a communicator");
  std::vector<int> everyone;
  for (int r = 0; r < nranks; ++r) everyone.push_back(r);
  SplitSpec whole{"a split after a refused one", std::vector<int>(everyone.size(), 0), everyone};
  hoopComm_t again = split(world, rank, everyone, whole);
  ok(hoopCommDestroy(again), nullptr, "destroy");
  SplitSpec parent{"the parent after a refused split", std::vector<int>(everyone.size(), 0),
                   everyone};
  checkSplit(parent, rank, everyone, world);
}

void missingSuite() {
  if (rank == nranks - 1) {
    // Never splits; stays alive past the others' time-out, then leaves.
    std::this_thread::sleep_for(std::chrono::seconds(6));
    hoopCommAbort(world);
    world = nullptr;
    ++checks;
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  hoopComm_t mine = nullptr;
  expectError(hoopCommSplit(world, 0, 0, &mine, nullptr), hoopTimeout, world, {"HOOP_TIMEOUT"},
              "a split the last rank never calls");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("failed after %.1f s\n", seconds);
  hoopCommAbort(world);
  world = nullptr;
}

// ---- premulsum ----

void compare(const std::vector<char>& expected, const char* actual, DataType t,
             const std::string& what) {
  const size_t size = hoop::dataTypeSize(t);
  for (size_t i = 0; i * size < expected.size(); ++i) {
    if (std::memcmp(expected.data() + i * size, actual + i * size, size) != 0) {
      die(what + ": element " + std::to_string(i) + " differs from the exact premultiplied sum");
    }
  }
  ++checks;
}

void premulSuite() {
  for (int ti = 0; ti < hoop::kNumDataTypes; ++ti) {
    const auto t = static_cast<DataType>(ti);
    const auto type = static_cast<hoopDataType_t>(ti);
    const size_t size = hoop::dataTypeSize(t);
    const std::vector<char> factor = hoop::test::premulFactorBytes(t, rank);
    hoopRedOp_t byValue = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&byValue, const_cast<char*>(factor.data()), type,
                                hoopScalarHostImmediate, world),
       nullptr, "create by value");
    // Made with another factor, then set: read when each call runs.
    std::vector<char> readLater(size, 0x11);
    hoopRedOp_t byPointer = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&byPointer, readLater.data(), type, hoopScalarDevice, world),
       nullptr, "create by pointer");
    readLater = factor;
    // Past the scale's block of 4 KiB for every type, and one element.
    for (size_t count : {size_t{1}, size_t{4099}}) {
      const std::string what =
          std::string(hoop::dataTypeName(t)) + " count " + std::to_string(count) + ": ";
      const std::vector<char> input = hoop::test::premulInputs(t, rank, count);
      const std::vector<char> expected = hoop::test::premulExpected(t, nranks, count);

      std::vector<char> out(input.size() + 1, 0x5a);
      ok(hoopAllReduce(input.data(), out.data(), count, type, byValue, world, nullptr), world,
         what + "allreduce");
      compare(expected, out.data(), t, what + "allreduce");
      if (out.back() != 0x5a) die(what + "allreduce wrote past recvbuff");
      compare(hoop::test::premulInputs(t, rank, count), input.data(), t,
              what + "allreduce left its input");

      std::vector<char> inPlace = input;
      ok(hoopAllReduce(inPlace.data(), inPlace.data(), count, type, byPointer, world, nullptr),
         world, what + "allreduce in place, factor read at the call");
      compare(expected, inPlace.data(), t, what + "allreduce in place");

      const int root = (ti + static_cast<int>(count)) % nranks;
      std::vector<char> reduced(input.size(), 0);
      ok(hoopReduce(input.data(), reduced.data(), count, type, byPointer, root, world, nullptr),
         world, what + "reduce");
      if (rank == root) compare(expected, reduced.data(), t, what + "reduce");

      const std::vector<char> blocks =
          hoop::test::premulInputs(t, rank, count * static_cast<size_t>(nranks));
      std::vector<char> mine(count * size, 0);
      ok(hoopReduceScatter(blocks.data(), mine.data(), count, type, byValue, world, nullptr), world,
         what + "reducescatter");
      const std::vector<char> all =
          hoop::test::premulExpected(t, nranks, count * static_cast<size_t>(nranks));
      compare(std::vector<char>(all.begin() + static_cast<long>(count * size * rank),
                                all.begin() + static_cast<long>(count * size * (rank + 1))),
              mine.data(), t, what + "reducescatter");
    }
    ok(hoopRedOpDestroy(byValue, world), nullptr, "destroy op");
    ok(hoopRedOpDestroy(byPointer, world), nullptr, "destroy op");
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string suite;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--init" && i + 1 < argc) {
      if (std::string(argv[++i]) != "uid") die("only --init uid");
    } else if (arg == "--suite" && i + 1 < argc) {
      suite = argv[++i];
    } else if (arg == "--nonblocking") {
      nonBlocking = true;
    } else {
      die("unknown argument " + arg);
    }
  }
  rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
  nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
  hoopConfig_t config = HOOP_CONFIG_INITIALIZER;
  config.blocking = nonBlocking ? 0 : 1;
  const hoopResult_t initialised =
      hoopCommInitRankConfig(&world, nranks, hoop::test::testUniqueId(rank), rank, &config);
  ok(initialised, world, "hoopCommInitRankConfig");
  if (suite == "split") {
    splitSuite();
  } else if (suite == "refused") {
    refusedSuite();
  } else if (suite == "missing") {
    missingSuite();
  } else if (suite == "premulsum") {
    premulSuite();
  } else {
    die("unknown suite " + suite);
  }
  if (world != nullptr) ok(hoopCommDestroy(world), nullptr, "hoopCommDestroy");
  std::printf("OK rank %d: %zu checks\n", rank, checks);
  return 0;
}
