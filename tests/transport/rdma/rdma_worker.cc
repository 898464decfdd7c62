// One rank of the RDMA suites that run in the Soft-RoCE guest (guest_suite.sh), kept lean: the
// guest runs 10 to 100 times slower than a host.
//
//   hoop_rdma_worker collectives   every collective at three sizes (inline, one slot, several
//                                  slots) in int32 and float32, exact against known results,
//                                  plus random floats whose results every rank must hold
//                                  bitwise alike; then send/recv and barriers
//   hoop_rdma_worker registered    send/recv of a large message between buffers both ranks
//                                  registered (hoopCommRegister): the zero-copy path
//   hoop_rdma_worker loop          allreduces until one fails; prints "ERROR <code>: <text>"
//                                  and exits 3 (the failure tests kill a rank or cut the link)
//
// The job comes from the environment (hoopCommInitFromEnv: HOOP_RANK, HOOP_SIZE,
// HOOP_ROOT_ADDR). Prints "OK rank R of N (C checks)" when every check passed.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
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

void compare(const std::vector<char>& expected, const char* actual, size_t bytes,
             const std::string& what) {
  if (bytes != expected.size() || std::memcmp(expected.data(), actual, bytes) != 0) {
    size_t at = 0;
    while (at < bytes && at < expected.size() && expected[at] == actual[at]) ++at;
    die(what + ": differs from the expected result at byte " + std::to_string(at));
  }
  ++checks;
}

// Every rank holds the same bytes: their fingerprints, gathered, are all equal.
void sameEverywhere(const std::vector<char>& data, const std::string& what) {
  const uint64_t mine = hoop::test::fingerprint(data);
  std::vector<uint64_t> all(static_cast<size_t>(nranks));
  ok(hoopAllGather(&mine, all.data(), 1, hoopUint64, comm, nullptr), what + " fingerprints");
  for (int r = 0; r < nranks; ++r) {
    if (all[static_cast<size_t>(r)] != all[0]) {
      die(what + ": rank " + std::to_string(r) + "'s result differs bitwise from rank 0's");
    }
  }
  ++checks;
}

std::string named(const char* call, DataType t, size_t count) {
  return std::string(call) + " " + std::string(hoop::dataTypeName(t)) +
         " count=" + std::to_string(count);
}

void collectivesAt(DataType t, size_t count) {
  const auto type = static_cast<hoopDataType_t>(t);
  const size_t size = hoop::dataTypeSize(t);
  const int root = static_cast<int>(count % static_cast<size_t>(nranks));
  {
    auto input = makeInput(t, RedOp::kSum, rank, nranks, count);
    std::vector<char> output(input.size());
    ok(hoopAllReduce(input.data(), output.data(), count, type, hoopSum, comm, nullptr),
       named("allreduce", t, count));
    compare(makeExpected(t, RedOp::kSum, nranks, count), output.data(), output.size(),
            named("allreduce", t, count));
    // In place, and with max: another schedule step shape, the same exact answer.
    auto inPlace = makeInput(t, RedOp::kMax, rank, nranks, count);
    ok(hoopAllReduce(inPlace.data(), inPlace.data(), count, type, hoopMax, comm, nullptr),
       named("allreduce in place (max)", t, count));
    compare(makeExpected(t, RedOp::kMax, nranks, count), inPlace.data(), inPlace.size(),
            named("allreduce in place (max)", t, count));
  }
  {
    auto data = makeInput(t, RedOp::kSum, root, nranks, count);
    std::vector<char> buffer = rank == root ? data : std::vector<char>(data.size(), 0);
    ok(hoopBroadcast(buffer.data(), buffer.data(), count, type, root, comm, nullptr),
       named("broadcast", t, count));
    compare(data, buffer.data(), buffer.size(), named("broadcast", t, count));
  }
  {
    auto input = makeInput(t, RedOp::kSum, rank, nranks, count);
    std::vector<char> output(input.size());
    ok(hoopReduce(input.data(), output.data(), count, type, hoopSum, root, comm, nullptr),
       named("reduce", t, count));
    if (rank == root) {
      compare(makeExpected(t, RedOp::kSum, nranks, count), output.data(), output.size(),
              named("reduce", t, count));
    }
  }
  {
    std::vector<char> expected;
    for (int r = 0; r < nranks; ++r) {
      auto block = makeInput(t, RedOp::kSum, r, nranks, count, 17 * static_cast<size_t>(r));
      expected.insert(expected.end(), block.begin(), block.end());
    }
    auto mine = makeInput(t, RedOp::kSum, rank, nranks, count, 17 * static_cast<size_t>(rank));
    std::vector<char> output(expected.size());
    ok(hoopAllGather(mine.data(), output.data(), count, type, comm, nullptr),
       named("allgather", t, count));
    compare(expected, output.data(), output.size(), named("allgather", t, count));
  }
  {
    auto input = makeInput(t, RedOp::kSum, rank, nranks, count * static_cast<size_t>(nranks));
    std::vector<char> output(count * size);
    ok(hoopReduceScatter(input.data(), output.data(), count, type, hoopSum, comm, nullptr),
       named("reducescatter", t, count));
    compare(makeExpected(t, RedOp::kSum, nranks, count, static_cast<size_t>(rank) * count),
            output.data(), output.size(), named("reducescatter", t, count));
  }
  {
    const auto [input, expected] = hoop::test::makeAllToAll(t, rank, nranks, count);
    std::vector<char> output(input.size());
    ok(hoopAllToAll(input.data(), output.data(), count, type, comm, nullptr),
       named("alltoall", t, count));
    compare(expected, output.data(), output.size(), named("alltoall", t, count));
  }
}

void collectives() {
  // Inline-sized, within one 512 KiB slot, and several slots (pipelined pieces).
  for (size_t count : {size_t{7}, size_t{20011}, size_t{400009}}) {
    collectivesAt(DataType::kInt32, count);
    collectivesAt(DataType::kFloat32, count);
  }
  // Random floats: an order of additions shows in the bits, so equal fingerprints mean every
  // rank combined in the same order.
  std::mt19937 generator(1234 + static_cast<unsigned>(rank));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t count : {size_t{5}, size_t{300007}}) {
    std::vector<float> input(count);
    for (float& value : input) value = uniform(generator);
    std::vector<char> output(count * sizeof(float));
    ok(hoopAllReduce(input.data(), output.data(), count, hoopFloat32, hoopSum, comm, nullptr),
       "allreduce of random floats");
    sameEverywhere(output, "allreduce of " + std::to_string(count) + " random floats");
  }
  // A ring shift of point-to-point messages, small and several slots large.
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  for (size_t count : {size_t{0}, size_t{3}, size_t{300001}}) {
    auto send = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count, 3);
    std::vector<char> recv(send.size(), 0);
    ok(hoopGroupStart(), "group start");
    ok(hoopSend(send.data(), count, hoopInt32, next, comm, nullptr), "send");
    ok(hoopRecv(recv.data(), count, hoopInt32, prev, comm, nullptr), "recv");
    ok(hoopGroupEnd(), "ring shift of " + std::to_string(count));
    compare(makeInput(DataType::kInt32, RedOp::kSum, prev, nranks, count, 3), recv.data(),
            recv.size(), "ring shift of " + std::to_string(count));
  }
  for (int round = 0; round < 3; ++round) ok(hoopBarrier(comm, nullptr), "barrier");
}

void registered() {
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  const size_t count = (3 << 20) / 4 + 1001;  // several slots, not a whole number of pages
  auto send = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count, 5);
  std::vector<char> recv(send.size(), 0);
  void* sendHandle = nullptr;
  void* recvHandle = nullptr;
  ok(hoopCommRegister(comm, send.data(), send.size(), &sendHandle), "register the send buffer");
  ok(hoopCommRegister(comm, recv.data(), recv.size(), &recvHandle), "register the recv buffer");
  for (int round = 0; round < 3; ++round) {
    std::fill(recv.begin(), recv.end(), 0);
    ok(hoopGroupStart(), "group start");
    ok(hoopSend(send.data(), count, hoopInt32, next, comm, nullptr), "send");
    ok(hoopRecv(recv.data(), count, hoopInt32, prev, comm, nullptr), "recv");
    ok(hoopGroupEnd(), "registered ring shift");
    compare(makeInput(DataType::kInt32, RedOp::kSum, prev, nranks, count, 5), recv.data(),
            recv.size(), "registered ring shift, round " + std::to_string(round));
  }
  ok(hoopCommDeregister(comm, sendHandle), "deregister the send buffer");
  ok(hoopCommDeregister(comm, recvHandle), "deregister the recv buffer");
  if (hoopCommDeregister(comm, recvHandle) != hoopInvalidArgument) {
    die("deregistering a handle twice was not hoopInvalidArgument");
  }
  ++checks;
}

const char* codeName(hoopResult_t result) {
  switch (result) {
    case hoopRemoteError: return "hoopRemoteError";
    case hoopTimeout: return "hoopTimeout";
    case hoopInvalidUsage: return "hoopInvalidUsage";
    case hoopSystemError: return "hoopSystemError";
    default: return "another error";
  }
}

[[noreturn]] void loop() {
  const size_t count = 1 << 18;
  auto input = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count);
  auto expected = makeExpected(DataType::kInt32, RedOp::kSum, nranks, count);
  std::vector<char> output(input.size());
  for (uint64_t call = 0;; ++call) {
    const hoopResult_t result =
        hoopAllReduce(input.data(), output.data(), count, hoopInt32, hoopSum, comm, nullptr);
    if (result != hoopSuccess) {
      std::printf("ERROR %s after %llu calls: %s\n", codeName(result),
                  static_cast<unsigned long long>(call), hoopGetLastError(comm));
      std::fflush(stdout);
      hoopCommAbort(comm);
      std::_Exit(3);
    }
    compare(expected, output.data(), output.size(), "allreduce in the loop");
    if (call == 2) {
      std::printf("LOOPING rank %d\n", rank);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string suite = argc > 1 ? argv[1] : "";
  if (suite != "collectives" && suite != "registered" && suite != "loop") {
    std::fprintf(stderr, "usage: %s collectives|registered|loop\n", argv[0]);
    return 2;
  }
  const auto started = std::chrono::steady_clock::now();
  auto secondsSince = [](std::chrono::steady_clock::time_point from) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
  };
  if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
    std::fprintf(stderr, "FAIL rank ?: init: %s\n", hoopGetLastError(nullptr));
    return 1;
  }
  ok(hoopCommUserRank(comm, &rank), "rank");
  ok(hoopCommCount(comm, &nranks), "count");
  const double initSeconds = secondsSince(started);
  const auto calls = std::chrono::steady_clock::now();
  if (suite == "collectives") collectives();
  if (suite == "registered") registered();
  if (suite == "loop") loop();
  const double callSeconds = secondsSince(calls);
  ok(hoopCommDestroy(comm), "destroy");
  // The times say where a slow guest spends them; nothing asserts on them.
  std::printf("OK rank %d of %d (%zu checks; init %.1f s, calls %.1f s)\n", rank, nranks, checks,
              initSeconds, callSeconds);
  return 0;
}
