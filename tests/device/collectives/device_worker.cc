// One rank of the device-memory tests: every collective and send/receive on device buffers,
// enqueued on a stream through the public C API and checked exactly once the stream is done.
// It runs on whatever device runtime the process has: the CPU emulation under
// HOOP_DEVICE_EMULATION=1 (the DeviceEmulated tests), CUDA on a GPU (tools/gpu-check.sh).
//
//   hoop_device_worker [--init uid|env]
//                      --suite sweep|p2p|random|graph|premulsum|dead-peer|timeout|abort|
//                              mismatch-kind|mismatch-count
//                      [--only NAME] [--large]
//
// With --init uid, HOOP_TEST_UID (hex unique id), HOOP_TEST_RANK and HOOP_TEST_NRANKS name the
// job; with env (the default), a launcher's variables do (hooprun, mpirun, torchrun).
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/half.h"
#include "device/device_runtime.h"
#include "graph_capture.h"
#include "hoop/hoop.h"
#include "premul_reference.h"
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
hoop::DeviceStream stream = nullptr;
size_t checks = 0;

[[noreturn]] void die(const std::string& message) { hoop::test::failRank(rank, message); }

void ok(hoopResult_t result, const std::string& what) {
  if (result != hoopSuccess) {
    die(what + ": " + hoopGetErrorString(result) + ": " + hoopGetLastError(comm));
  }
}

hoop::DeviceRuntime& runtime() { return hoop::deviceRuntime(); }

// Guard bytes after every buffer: a collective that writes past its end changes them.
constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuard = 0x5a;

// A device buffer of `bytes` (plus the guard), filled from `host` (or the guard pattern).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes, const std::vector<char>* host = nullptr) : bytes_(bytes) {
    data_ = static_cast<char*>(runtime().allocate(bytes + kGuardBytes));
    std::vector<char> fill(bytes + kGuardBytes, static_cast<char>(kGuard));
    if (host != nullptr && !host->empty()) std::memcpy(fill.data(), host->data(), host->size());
    runtime().upload(data_, fill.data(), fill.size());
  }
  ~DeviceBuffer() { runtime().release(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  char* data() const { return data_; }
  // The contents (after the stream is done), and whether the guard is intact.
  std::vector<char> read(bool* guardIntact) const {
    std::vector<char> all(bytes_ + kGuardBytes);
    runtime().download(all.data(), data_, all.size());
    *guardIntact = true;
    for (size_t i = bytes_; i < all.size(); ++i) {
      if (static_cast<unsigned char>(all[i]) != kGuard) *guardIntact = false;
    }
    all.resize(bytes_);
    return all;
  }

 private:
  char* data_ = nullptr;
  size_t bytes_ = 0;
};

std::string describe(const char* call, DataType t, RedOp op, size_t count, bool inPlace) {
  return std::string(call) + " " + std::string(hoop::dataTypeName(t)) + " " +
         std::string(hoop::redOpName(op)) + " count=" + std::to_string(count) +
         (inPlace ? " in-place" : " out-of-place") + " on device memory";
}

// Waits for the stream, then compares `buffer`'s first expected.size() bytes (at `offset`) with
// `expected`, element by element, and checks the guard.
void check(const DeviceBuffer& buffer, const std::vector<char>& expected, DataType t,
           const std::string& what, size_t offset = 0) {
  runtime().synchronize(stream);
  bool guardIntact = false;
  const std::vector<char> all = buffer.read(&guardIntact);
  if (!guardIntact) die(what + ": wrote past the end of recvbuff");
  const size_t size = hoop::dataTypeSize(t);
  for (size_t i = 0; i * size < expected.size(); ++i) {
    if (std::memcmp(expected.data() + i * size, all.data() + offset + i * size, size) != 0) {
      uint64_t want = 0;
      uint64_t got = 0;
      std::memcpy(&want, expected.data() + i * size, size);
      std::memcpy(&got, all.data() + offset + i * size, size);
      die(what + ": element " + std::to_string(i) + " expected bits " + std::to_string(want) +
          " got " + std::to_string(got));
    }
  }
  ++checks;
}

std::vector<size_t> sweepCounts(bool large) {
  std::vector<size_t> counts = {0, 1, static_cast<size_t>(nranks + 1), 7, 13, 257, 1031, 65537};
  if (large) counts.push_back(1000007);
  return counts;
}

void allReduceCase(DataType t, RedOp op, size_t count, bool inPlace) {
  const auto input = makeInput(t, op, rank, nranks, count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size(), inPlace ? &input : nullptr);
  const std::string what = describe("allreduce", t, op, count, inPlace);
  ok(hoopAllReduce(inPlace ? recv.data() : send.data(), recv.data(), count,
                   static_cast<hoopDataType_t>(t), static_cast<hoopRedOp_t>(op), comm, stream),
     what);
  check(recv, makeExpected(t, op, nranks, count), t, what);
}

void reduceCase(DataType t, RedOp op, size_t count, bool inPlace, int root) {
  const auto input = makeInput(t, op, rank, nranks, count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size(), inPlace ? &input : nullptr);
  const std::string what =
      describe("reduce", t, op, count, inPlace) + " root=" + std::to_string(root);
  ok(hoopReduce(inPlace ? recv.data() : send.data(), recv.data(), count,
                static_cast<hoopDataType_t>(t), static_cast<hoopRedOp_t>(op), root, comm, stream),
     what);
  if (rank == root) {
    check(recv, makeExpected(t, op, nranks, count), t, what);
  } else {
    runtime().synchronize(stream);
  }
}

void broadcastCase(DataType t, size_t count, bool inPlace, int root) {
  const auto data = makeInput(t, RedOp::kSum, root, nranks, count);
  const std::vector<char> mine = rank == root ? data : std::vector<char>(data.size(), 0);
  DeviceBuffer send(mine.size(), &mine);
  DeviceBuffer recv(data.size(), inPlace && rank == root ? &data : nullptr);
  const std::string what =
      describe("broadcast", t, RedOp::kSum, count, inPlace) + " root=" + std::to_string(root);
  ok(hoopBroadcast(inPlace ? recv.data() : send.data(), recv.data(), count,
                   static_cast<hoopDataType_t>(t), root, comm, stream),
     what);
  check(recv, data, t, what);
}

void allGatherCase(DataType t, size_t count, bool inPlace) {
  const size_t size = hoop::dataTypeSize(t);
  std::vector<char> expected;
  for (int r = 0; r < nranks; ++r) {
    auto block = makeInput(t, RedOp::kSum, r, nranks, count, 17 * static_cast<size_t>(r));
    expected.insert(expected.end(), block.begin(), block.end());
  }
  const auto mine = makeInput(t, RedOp::kSum, rank, nranks, count, 17 * static_cast<size_t>(rank));
  // In place, this rank's block already sits at its place in the output.
  std::vector<char> start(expected.size(), 0);
  if (!mine.empty()) std::memcpy(start.data() + rank * count * size, mine.data(), mine.size());
  DeviceBuffer send(mine.size(), &mine);
  DeviceBuffer recv(expected.size(), inPlace ? &start : nullptr);
  const std::string what = describe("allgather", t, RedOp::kSum, count, inPlace);
  ok(hoopAllGather(inPlace ? recv.data() + rank * count * size : send.data(), recv.data(), count,
                   static_cast<hoopDataType_t>(t), comm, stream),
     what);
  check(recv, expected, t, what);
}

void reduceScatterCase(DataType t, RedOp op, size_t count, bool inPlace) {
  const size_t size = hoop::dataTypeSize(t);
  const size_t total = count * static_cast<size_t>(nranks);
  const auto input = makeInput(t, op, rank, nranks, total);
  const auto expected = makeExpected(t, op, nranks, count, static_cast<size_t>(rank) * count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(count * size);
  const std::string what = describe("reducescatter", t, op, count, inPlace);
  // In place, the result lands in this rank's block of the input.
  char* result = inPlace ? send.data() + static_cast<size_t>(rank) * count * size : recv.data();
  ok(hoopReduceScatter(send.data(), result, count, static_cast<hoopDataType_t>(t),
                       static_cast<hoopRedOp_t>(op), comm, stream),
     what);
  if (inPlace) {
    check(send, expected, t, what, static_cast<size_t>(rank) * count * size);
  } else {
    check(recv, expected, t, what);
  }
}

void allToAllCase(DataType t, size_t count, bool inPlace) {
  const auto [input, expected] = hoop::test::makeAllToAll(t, rank, nranks, count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size(), inPlace ? &input : nullptr);
  const std::string what = describe("alltoall", t, RedOp::kSum, count, inPlace);
  ok(hoopAllToAll(inPlace ? recv.data() : send.data(), recv.data(), count,
                  static_cast<hoopDataType_t>(t), comm, stream),
     what);
  check(recv, expected, t, what);
}

// Every collective, type, op, placement and count of sweepCounts: the large count with sum for
// every type and every op for int32 and float only (its pipelining does not depend on them).
void sweep(bool large, const std::string& only) {
  auto wanted = [&](const char* name) { return only.empty() || only == name; };
  for (size_t count : sweepCounts(large)) {
    const bool big = count > 100000;
    const size_t blockCount = big ? count / static_cast<size_t>(nranks) + 1 : count;
    for (int ti = 0; ti < hoop::kNumDataTypes; ++ti) {
      const auto t = static_cast<DataType>(ti);
      for (int inPlace = 0; inPlace < 2; ++inPlace) {
        for (int oi = 0; oi < hoop::kNumRedOps; ++oi) {
          const auto op = static_cast<RedOp>(oi);
          if (big && op != RedOp::kSum && t != DataType::kInt32 && t != DataType::kFloat32) {
            continue;
          }
          if (wanted("allreduce")) allReduceCase(t, op, count, inPlace != 0);
          if (wanted("reduce")) reduceCase(t, op, count, inPlace != 0, (oi + ti) % nranks);
          if (wanted("reducescatter")) reduceScatterCase(t, op, blockCount, inPlace != 0);
        }
        if (wanted("broadcast")) broadcastCase(t, count, inPlace != 0, (ti + 1) % nranks);
        if (wanted("allgather")) allGatherCase(t, blockCount, inPlace != 0);
        if (wanted("alltoall")) allToAllCase(t, blockCount, inPlace != 0);
      }
    }
  }
}

// A ring shift in one group at several sizes (the largest spans many slots), then everyone to
// everyone, this rank included.
void p2p() {
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  for (size_t count : {size_t{0}, size_t{1}, size_t{1000}, size_t{700001}}) {
    const auto mine = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count, 3);
    DeviceBuffer send(mine.size(), &mine);
    DeviceBuffer recv(mine.size());
    ok(hoopGroupStart(), "group start");
    ok(hoopSend(send.data(), count, hoopInt32, next, comm, stream), "send");
    ok(hoopRecv(recv.data(), count, hoopInt32, prev, comm, stream), "recv");
    const std::string what = "ring shift of " + std::to_string(count) + " on device memory";
    ok(hoopGroupEnd(), what);
    check(recv, makeInput(DataType::kInt32, RedOp::kSum, prev, nranks, count, 3), DataType::kInt32,
          what);
  }
  const size_t count = 513;
  const auto mine = makeInput(DataType::kFloat64, RedOp::kMax, rank, nranks, count);
  DeviceBuffer send(mine.size(), &mine);
  std::vector<std::unique_ptr<DeviceBuffer>> received;
  ok(hoopGroupStart(), "group start");
  for (int peer = 0; peer < nranks; ++peer) {
    received.push_back(std::make_unique<DeviceBuffer>(mine.size()));
    ok(hoopRecv(received.back()->data(), count, hoopFloat64, peer, comm, stream), "recv");
    ok(hoopSend(send.data(), count, hoopFloat64, peer, comm, stream), "send");
  }
  ok(hoopGroupEnd(), "everyone to everyone on device memory");
  for (int peer = 0; peer < nranks; ++peer) {
    check(*received[static_cast<size_t>(peer)],
          makeInput(DataType::kFloat64, RedOp::kMax, peer, nranks, count), DataType::kFloat64,
          "everyone to everyone: from rank " + std::to_string(peer));
  }
}

// Random (non-integer) floats: every rank must end with the same bits.
void randomIdentical() {
  std::mt19937_64 generator(4321 + static_cast<uint64_t>(rank));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBfloat16}) {
    for (size_t count : {size_t{3}, size_t{4099}, size_t{300007}}) {
      for (RedOp op : {RedOp::kSum, RedOp::kAvg}) {
        const size_t size = hoop::dataTypeSize(t);
        std::vector<char> input(count * size);
        for (size_t i = 0; i < count; ++i) {
          const float value = uniform(generator);
          if (t == DataType::kFloat32) std::memcpy(input.data() + i * 4, &value, 4);
          if (t == DataType::kFloat16) {
            const uint16_t h = hoop::floatToHalf(value);
            std::memcpy(input.data() + i * 2, &h, 2);
          }
          if (t == DataType::kBfloat16) {
            const uint16_t b = hoop::floatToBf16(value);
            std::memcpy(input.data() + i * 2, &b, 2);
          }
        }
        DeviceBuffer send(input.size(), &input);
        DeviceBuffer recv(input.size());
        const std::string what = describe("allreduce(random)", t, op, count, false);
        ok(hoopAllReduce(send.data(), recv.data(), count, static_cast<hoopDataType_t>(t),
                         static_cast<hoopRedOp_t>(op), comm, stream),
           what);
        runtime().synchronize(stream);
        bool guardIntact = false;
        uint64_t mine = hoop::test::fingerprint(recv.read(&guardIntact));
        if (!guardIntact) die(what + ": wrote past the end of recvbuff");
        // The fingerprints travel through host memory: a check the device path cannot fool.
        std::vector<uint64_t> all(static_cast<size_t>(nranks));
        ok(hoopAllGather(&mine, all.data(), 1, hoopUint64, comm, nullptr), "allgather");
        for (int r = 0; r < nranks; ++r) {
          if (all[static_cast<size_t>(r)] != all[0]) {
            die(what + ": rank " + std::to_string(r) + "'s result differs from rank 0's");
          }
        }
        ++checks;
      }
    }
  }
}

// Collectives captured into a graph on the stream and replayed: an allreduce and a ring shift
// (a send/receive group), each replay on new inputs uploaded into the same buffers, every
// result exact. One call of each before the capture sets up connections and staging, which the
// capture cannot (it may not allocate).
void graph() {
  const size_t count = 70001;  // several slots' worth of pieces on the larger types
  const size_t bytes = count * sizeof(int32_t);
  const int next = (rank + 1) % nranks;
  const int prev = (rank + nranks - 1) % nranks;
  DeviceBuffer send(bytes);
  DeviceBuffer sum(bytes);
  DeviceBuffer shifted(bytes);
  auto enqueueCalls = [&] {
    ok(hoopAllReduce(send.data(), sum.data(), count, hoopInt32, hoopSum, comm, stream),
       "allreduce on a capturing stream");
    ok(hoopGroupStart(), "group start");
    ok(hoopSend(send.data(), count, hoopInt32, next, comm, stream), "send");
    ok(hoopRecv(shifted.data(), count, hoopInt32, prev, comm, stream), "recv");
    ok(hoopGroupEnd(), "ring shift on a capturing stream");
  };
  enqueueCalls();
  runtime().synchronize(stream);
  hoop::test::beginCapture(stream);
  enqueueCalls();
  const std::unique_ptr<hoop::test::CapturedGraph> captured = hoop::test::endCapture(stream);
  for (size_t replay = 0; replay < 3; ++replay) {
    // Each replay's inputs differ (an offset into the reference pattern), so a replay that read
    // stale data or skipped a step would not pass.
    const auto mine = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count, replay * 5);
    runtime().upload(send.data(), mine.data(), mine.size());
    captured->launch(stream);
    const std::string what = "graph replay " + std::to_string(replay);
    check(sum, makeExpected(DataType::kInt32, RedOp::kSum, nranks, count, replay * 5),
          DataType::kInt32, what + ": allreduce");
    check(shifted, makeInput(DataType::kInt32, RedOp::kSum, prev, nranks, count, replay * 5),
          DataType::kInt32, what + ": ring shift");
  }
}

// Premultiplied sums (hoopRedOpCreatePreMulSum) on device memory, every datatype, each rank its
// own factor: by value, from device memory (set after the op was made: the device reads it in
// stream order), and from host memory (read when the call is enqueued). Then hoopCommFinalize
// must leave nothing running: the last results are read without synchronizing the stream.
void premulSum() {
  for (int ti = 0; ti < hoop::kNumDataTypes; ++ti) {
    const auto t = static_cast<DataType>(ti);
    const auto type = static_cast<hoopDataType_t>(ti);
    const size_t size = hoop::dataTypeSize(t);
    std::vector<char> factor = hoop::test::premulFactorBytes(t, rank);
    const std::vector<char> wrong(size, 0x11);
    hoopRedOp_t byValue = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&byValue, factor.data(), type, hoopScalarHostImmediate, comm),
       "create by value");
    DeviceBuffer onDevice(size, &wrong);
    hoopRedOp_t fromDevice = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&fromDevice, onDevice.data(), type, hoopScalarDevice, comm),
       "create from device memory");
    runtime().upload(onDevice.data(), factor.data(), size);
    std::vector<char> onHost = wrong;
    hoopRedOp_t fromHost = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&fromHost, onHost.data(), type, hoopScalarDevice, comm),
       "create from host memory");
    onHost = factor;
    for (size_t count : {size_t{1}, size_t{4099}}) {
      const std::string what =
          std::string(hoop::dataTypeName(t)) + " count " + std::to_string(count) + ": ";
      const std::vector<char> input = hoop::test::premulInputs(t, rank, count);
      const std::vector<char> expected = hoop::test::premulExpected(t, nranks, count);
      DeviceBuffer send(input.size(), &input);
      DeviceBuffer recv(input.size());
      ok(hoopAllReduce(send.data(), recv.data(), count, type, byValue, comm, stream),
         what + "allreduce");
      check(recv, expected, t, what + "allreduce on device memory");
      check(send, input, t, what + "allreduce left its input");

      DeviceBuffer inPlace(input.size(), &input);
      ok(hoopAllReduce(inPlace.data(), inPlace.data(), count, type, fromDevice, comm, stream),
         what + "allreduce in place");
      check(inPlace, expected, t, what + "allreduce in place, factor in device memory");

      const int root = (ti + static_cast<int>(count)) % nranks;
      DeviceBuffer reduced(input.size());
      ok(hoopReduce(send.data(), reduced.data(), count, type, fromDevice, root, comm, stream),
         what + "reduce");
      if (rank == root) check(reduced, expected, t, what + "reduce, factor in device memory");

      const std::vector<char> blocks =
          hoop::test::premulInputs(t, rank, count * static_cast<size_t>(nranks));
      const std::vector<char> all =
          hoop::test::premulExpected(t, nranks, count * static_cast<size_t>(nranks));
      DeviceBuffer blockSend(blocks.size(), &blocks);
      DeviceBuffer mine(count * size);
      ok(hoopReduceScatter(blockSend.data(), mine.data(), count, type, fromHost, comm, stream),
         what + "reducescatter");
      check(mine,
            std::vector<char>(all.begin() + static_cast<long>(count * size * rank),
                              all.begin() + static_cast<long>(count * size * (rank + 1))),
            t, what + "reducescatter, factor in host memory");
    }
    ok(hoopRedOpDestroy(byValue, comm), "destroy");
    ok(hoopRedOpDestroy(fromDevice, comm), "destroy");
    ok(hoopRedOpDestroy(fromHost, comm), "destroy");
  }
  // A communicator split from this one serves device memory as any other; its keys reverse the
  // ranks.
  {
    hoopComm_t reversed = nullptr;
    ok(hoopCommSplit(comm, 0, nranks - rank, &reversed, nullptr), "hoopCommSplit");
    int newRank = -1;
    ok(hoopCommUserRank(reversed, &newRank), "rank in the split");
    if (newRank != nranks - 1 - rank) die("the split did not reverse the ranks");
    const int32_t jobRank = rank;
    const std::vector<char> mine(reinterpret_cast<const char*>(&jobRank),
                                 reinterpret_cast<const char*>(&jobRank) + sizeof(jobRank));
    std::vector<char> expected;
    for (int r = nranks - 1; r >= 0; --r) {
      const auto value = static_cast<int32_t>(r);
      expected.insert(expected.end(), reinterpret_cast<const char*>(&value),
                      reinterpret_cast<const char*>(&value) + sizeof(value));
    }
    DeviceBuffer send(mine.size(), &mine);
    DeviceBuffer gathered(expected.size());
    ok(hoopAllGather(send.data(), gathered.data(), 1, hoopInt32, reversed, stream),
       "allgather on the split");
    check(gathered, expected, DataType::kInt32, "allgather of job ranks on the split");
    const size_t count = 4099;
    std::vector<char> factor = hoop::test::premulFactorBytes(DataType::kInt32, rank);
    hoopRedOp_t op = hoopSum;
    ok(hoopRedOpCreatePreMulSum(&op, factor.data(), hoopInt32, hoopScalarHostImmediate, reversed),
       "create on the split");
    const std::vector<char> input = hoop::test::premulInputs(DataType::kInt32, rank, count);
    DeviceBuffer data(input.size(), &input);
    ok(hoopAllReduce(data.data(), data.data(), count, hoopInt32, op, reversed, stream),
       "premultiplied allreduce on the split");
    check(data, hoop::test::premulExpected(DataType::kInt32, nranks, count), DataType::kInt32,
          "premultiplied allreduce on the split");
    ok(hoopCommDestroy(reversed), "destroy the split");
  }

  // Enqueued, then finalized: once hoopCommFinalize returns the device has run it.
  const size_t count = 65537;
  const DataType t = DataType::kFloat32;
  std::vector<char> factor = hoop::test::premulFactorBytes(t, rank);
  hoopRedOp_t op = hoopSum;
  ok(hoopRedOpCreatePreMulSum(&op, factor.data(), hoopFloat32, hoopScalarHostImmediate, comm),
     "create");
  const std::vector<char> input = hoop::test::premulInputs(t, rank, count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size());
  ok(hoopAllReduce(send.data(), recv.data(), count, hoopFloat32, op, comm, stream),
     "allreduce before hoopCommFinalize");
  ok(hoopCommFinalize(comm), "hoopCommFinalize");
  bool guardIntact = false;
  if (recv.read(&guardIntact) != hoop::test::premulExpected(t, nranks, count) || !guardIntact) {
    die("hoopCommFinalize returned before the device ran the allreduce enqueued before it");
  }
  if (hoopAllReduce(send.data(), recv.data(), count, hoopFloat32, hoopSum, comm, stream) !=
      hoopInvalidUsage) {
    die("a finalized communicator took an allreduce");
  }
  ++checks;
}

// Rank 0 enqueues an allreduce that can never finish; the other ranks end in `how`:
//   dead-peer: rank 1 is killed (SIGKILL) without calling it; the others never call it either;
//   timeout: they stay alive without calling it (the job runs with a short HOOP_TIMEOUT);
//   abort: they do not call it, and rank 0 aborts its communicator.
// Rank 0's stream must be released every time, and the first two must say why through
// hoopCommGetAsyncError, naming the cause.
void stuck(const std::string& how) {
  const size_t count = 4096;
  const auto input = makeInput(DataType::kFloat32, RedOp::kSum, rank, nranks, count);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size());
  // Everyone connected and ready first: the failure must hit enqueued work, not set-up.
  ok(hoopAllReduce(send.data(), recv.data(), count, hoopFloat32, hoopSum, comm, stream),
     "the allreduce before");
  runtime().synchronize(stream);
  if (rank != 0) {
    if (how == "dead-peer" && rank == 1) raise(SIGKILL);
    // Alive, but never making the call rank 0 waits in, until rank 0 is done with it.
    std::this_thread::sleep_for(std::chrono::seconds(how == "timeout" ? 8 : 4));
    hoopCommAbort(comm);
    comm = nullptr;
    return;
  }
  ok(hoopAllReduce(send.data(), recv.data(), count, hoopFloat32, hoopSum, comm, stream),
     "the allreduce that cannot finish");
  const auto start = std::chrono::steady_clock::now();
  if (how == "abort") {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ok(hoopCommAbort(comm), "hoopCommAbort");
    comm = nullptr;
    runtime().synchronize(stream);
  } else {
    runtime().synchronize(stream);
    hoopResult_t asyncError = hoopSuccess;
    ok(hoopCommGetAsyncError(comm, &asyncError), "hoopCommGetAsyncError");
    const std::string message = hoopGetLastError(comm);
    const hoopResult_t expected = how == "timeout" ? hoopTimeout : hoopRemoteError;
    if (asyncError != expected) {
      die("the released stream's communicator reports " +
          std::string(hoopGetErrorString(asyncError)) + " (" + message + "), expected " +
          hoopGetErrorString(expected));
    }
    const std::string cause = how == "timeout" ? "HOOP_TIMEOUT" : "rank 1";
    // A time-out names who never enqueued what rank 0 waits for.
    if (how == "timeout" && message.find("has enqueued") == std::string::npos) {
      die("the time-out does not name the peers that lag: " + message);
    }
    if (message.find(cause) == std::string::npos ||
        message.find("allreduce") == std::string::npos) {
      die("the error does not name the operation and '" + cause + "': " + message);
    }
    // The communicator failed: the next call says so instead of enqueueing more.
    if (hoopAllReduce(send.data(), recv.data(), count, hoopFloat32, hoopSum, comm, stream) ==
        hoopSuccess) {
      die("a call on a failed communicator was accepted");
    }
    hoopCommAbort(comm);
    comm = nullptr;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("released after %.1f s\n", seconds);
  ++checks;
}

// Every rank calls an allreduce but the last, which calls `how`: "kind" an allgather, "count"
// the allreduce with another count. No rank may hang or combine the wrong data: each fails with
// hoopInvalidUsage naming the calls, either at once (the rank that enqueued second and found the
// difference) or through hoopCommGetAsyncError once its stream was released (HOOP_TIMEOUT is
// long: a rank that ended in its time-out instead fails the check).
void mismatch(const std::string& how) {
  const size_t count = 4096;
  const auto input = makeInput(DataType::kInt32, RedOp::kSum, rank, nranks, count + 1);
  DeviceBuffer send(input.size(), &input);
  DeviceBuffer recv(input.size() * static_cast<size_t>(nranks));
  ok(hoopAllReduce(send.data(), recv.data(), count, hoopInt32, hoopSum, comm, stream),
     "the allreduce before");
  runtime().synchronize(stream);
  const auto start = std::chrono::steady_clock::now();
  const bool odd = rank == nranks - 1;
  hoopResult_t result = hoopSuccess;
  if (odd && how == "kind") {
    result = hoopAllGather(send.data(), recv.data(), count, hoopInt32, comm, stream);
  } else {
    result = hoopAllReduce(send.data(), recv.data(), odd ? count + 1 : count, hoopInt32, hoopSum,
                           comm, stream);
  }
  std::string message;
  if (result == hoopSuccess) {
    runtime().synchronize(stream);
    ok(hoopCommGetAsyncError(comm, &result), "hoopCommGetAsyncError");
  }
  message = hoopGetLastError(comm);
  if (result != hoopInvalidUsage) {
    die("the mismatched call ended in " + std::string(hoopGetErrorString(result)) + " (" + message +
        "), expected invalid usage");
  }
  const std::string other = how == "kind" ? "allgather" : std::to_string(count + 1) + " x int32";
  if (message.find("allreduce") == std::string::npos || message.find(other) == std::string::npos) {
    die("the error does not name both calls (allreduce and " + other + "): " + message);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("failed after %.1f s: %s\n", seconds, message.c_str());
  hoopCommAbort(comm);
  comm = nullptr;
  ++checks;
}

}  // namespace

int main(int argc, char** argv) {
  std::string init = "env";
  std::string suite = "sweep";
  std::string only;
  bool large = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--init" && i + 1 < argc) {
      init = argv[++i];
    } else if (arg == "--suite" && i + 1 < argc) {
      suite = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--large") {
      large = true;
    } else {
      die("unknown argument " + arg);
    }
  }
  if (init == "uid") {
    rank = std::atoi(std::getenv("HOOP_TEST_RANK"));
    nranks = std::atoi(std::getenv("HOOP_TEST_NRANKS"));
    ok(hoopCommInitRank(&comm, nranks, hoop::test::testUniqueId(rank), rank), "hoopCommInitRank");
  } else if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
    die(std::string("hoopCommInitFromEnv: ") + hoopGetLastError(nullptr));
  }
  ok(hoopCommUserRank(comm, &rank), "rank");
  ok(hoopCommCount(comm, &nranks), "count");
  try {
    stream = runtime().createStream();
    if (suite == "sweep") {
      sweep(large, only);
    } else if (suite == "p2p") {
      p2p();
    } else if (suite == "random") {
      randomIdentical();
    } else if (suite == "graph") {
      graph();
    } else if (suite == "premulsum") {
      premulSum();
    } else if (suite == "dead-peer" || suite == "timeout" || suite == "abort") {
      stuck(suite);
    } else if (suite == "mismatch-kind" || suite == "mismatch-count") {
      mismatch(suite.substr(suite.find('-') + 1));
    } else {
      die("unknown suite " + suite);
    }
    runtime().synchronize(stream);
  } catch (const std::exception& e) {
    die(std::string("device runtime: ") + e.what());
  }
  if (comm != nullptr) ok(hoopCommDestroy(comm), "hoopCommDestroy");
  runtime().destroyStream(stream);
  std::printf("OK rank %d: %zu checks on %s device memory\n", rank, checks, runtime().name());
  return 0;
}
