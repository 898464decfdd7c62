// A rank of the job that the hostile-input tests attack. Joins with hoopCommInitFromEnv (rank 0
// hosts the rendezvous root at HOOP_ROOT_ADDR), runs allreduces with exact integer checks until
// the file named by HOOP_SECURITY_GATE exists (rank 0 decides, so every rank runs the same
// number), then an alltoall, which opens the connections between ranks that are not ring
// neighbours and so makes their listeners accept whatever is waiting there, then a last
// allreduce. Prints "OK rank R" and exits 0 when every result was exact; exits 3 when
// initialisation failed (printing why) and 1 on any other failure.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "hoop/hoop.h"

namespace {

void check(bool condition, const std::string& what) {
  if (!condition) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    std::exit(1);
  }
}

void ok(hoopResult_t result, hoopComm_t comm, const char* call) {
  check(result == hoopSuccess, std::string(call) + ": " + hoopGetLastError(comm));
}

// Every rank contributes rank * 1000 + i + round at element i; the sum is known in closed form.
void allreduceRound(hoopComm_t comm, int rank, int nranks, int round) {
  constexpr size_t kCount = 4096;
  std::vector<int32_t> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = rank * 1000 + static_cast<int32_t>(i) + round;
  ok(hoopAllReduce(data.data(), data.data(), kCount, hoopInt32, hoopSum, comm, nullptr), comm,
     "hoopAllReduce");
  const int32_t rankSum = 1000 * nranks * (nranks - 1) / 2;
  for (size_t i = 0; i < kCount; ++i) {
    int32_t expected = rankSum + nranks * (static_cast<int32_t>(i) + round);
    check(data[i] == expected, "allreduce round " + std::to_string(round) + " element " +
                                   std::to_string(i) + ": " + std::to_string(data[i]) +
                                   " != " + std::to_string(expected));
  }
}

void allToAll(hoopComm_t comm, int rank, int nranks) {
  constexpr size_t kCount = 1024;
  std::vector<int32_t> send(kCount * nranks);
  std::vector<int32_t> recv(kCount * nranks, -1);
  for (int to = 0; to < nranks; ++to) {
    for (size_t i = 0; i < kCount; ++i) send[to * kCount + i] = rank * 100000 + to * 1000 + i;
  }
  ok(hoopAllToAll(send.data(), recv.data(), kCount, hoopInt32, comm, nullptr), comm,
     "hoopAllToAll");
  for (int from = 0; from < nranks; ++from) {
    for (size_t i = 0; i < kCount; ++i) {
      int32_t expected = from * 100000 + rank * 1000 + static_cast<int32_t>(i);
      check(recv[from * kCount + i] == expected,
            "alltoall block from rank " + std::to_string(from) + " element " + std::to_string(i));
    }
  }
}

}  // namespace

int main() {
  hoopComm_t comm = nullptr;
  if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
    std::printf("INIT FAILED: %s\n", hoopGetLastError(nullptr));
    return 3;
  }
  int rank = 0;
  int nranks = 0;
  ok(hoopCommUserRank(comm, &rank), comm, "hoopCommUserRank");
  ok(hoopCommCount(comm, &nranks), comm, "hoopCommCount");
  const char* gate = std::getenv("HOOP_SECURITY_GATE");

  int round = 0;
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int32_t open = 0; open == 0; ++round) {
    allreduceRound(comm, rank, nranks, round);
    struct stat info;
    open = gate == nullptr || stat(gate, &info) == 0 || std::chrono::steady_clock::now() > giveUp;
    ok(hoopBroadcast(&open, &open, 1, hoopInt32, 0, comm, nullptr), comm, "hoopBroadcast");
    if (open == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  allToAll(comm, rank, nranks);
  allreduceRound(comm, rank, nranks, round);
  ok(hoopCommDestroy(comm), nullptr, "hoopCommDestroy");
  std::printf("OK rank %d after %d rounds\n", rank, round + 1);
  return 0;
}
