// One rank of a training-engine test job, started by hooprun: runs one suite against the engine
// with exact integer-valued data, prints "FAIL ..." lines for wrong results and "OK rank R <suite>"
// at the end when everything held. Exits non-zero on any failure.
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hoop/train.hpp"

namespace {

using hoop::train::Engine;
using hoop::train::EngineOptions;

int gRank = 0;
int gSize = 1;
bool gFailed = false;

void expect(bool condition, const std::string& what) {
  if (condition) return;
  gFailed = true;
  std::printf("FAIL rank %d: %s\n", gRank, what.c_str());
  std::fflush(stdout);
}

// Runs body and returns the message of the hoop::Exception it threw ("" if none).
std::string errorOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const hoop::Exception& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Tensor t on rank r holds t * 1000 + r * 10 + i % 7 in element i: distinct per tensor and rank,
// small integers so float sums are exact.
int valueOf(size_t tensor, int rank, size_t i) {
  return static_cast<int>(tensor * 1000 + static_cast<size_t>(rank) * 10 + i % 7);
}

// Many tensors of several sizes, types and operations, submitted in a different shuffled order on
// every rank and from two threads at once.
void shuffledSuite(Engine& engine) {
  constexpr size_t kTensors = 60;
  struct Tensor {
    std::vector<float> floats;
    std::vector<int32_t> ints;
    hoopRedOp_t op;
  };
  std::vector<Tensor> tensors(kTensors);
  const hoopRedOp_t ops[] = {hoopSum, hoopMax, hoopMin, hoopAvg};
  for (size_t t = 0; t < kTensors; ++t) {
    const size_t count = 1 + (t * 37) % 300;
    tensors[t].op = ops[t % 4];
    for (size_t i = 0; i < count; ++i) {
      tensors[t].floats.push_back(static_cast<float>(valueOf(t, gRank, i)));
      tensors[t].ints.push_back(valueOf(t, gRank, i));
    }
  }
  std::vector<size_t> order(kTensors);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(gRank) + 7));

  // Float sums are prescaled by 2 and postscaled by 0.25 (exact powers of two).
  std::vector<Engine::Handle> handles(kTensors * 2);
  auto submitHalf = [&](size_t begin, size_t end) {
    for (size_t k = begin; k < end; ++k) {
      const size_t t = order[k];
      Tensor& x = tensors[t];
      const bool scaled = x.op == hoopSum;
      handles[2 * t] = engine.allReduce("f" + std::to_string(t), x.floats.data(), x.floats.data(),
                                        x.floats.size(), hoopFloat32, x.op, scaled ? 2.0 : 1.0,
                                        scaled ? 0.25 : 1.0);
      handles[2 * t + 1] = engine.allReduce("i" + std::to_string(t), x.ints.data(), x.ints.data(),
                                            x.ints.size(), hoopInt32, x.op);
    }
  };
  std::thread other(submitHalf, 0, kTensors / 2);
  submitHalf(kTensors / 2, kTensors);
  other.join();
  for (Engine::Handle h : handles) engine.wait(h);

  for (size_t t = 0; t < kTensors; ++t) {
    const Tensor& x = tensors[t];
    for (size_t i = 0; i < x.ints.size(); ++i) {
      int64_t sum = 0, max = INT64_MIN, min = INT64_MAX;
      for (int r = 0; r < gSize; ++r) {
        const int v = valueOf(t, r, i);
        sum += v;
        max = std::max<int64_t>(max, v);
        min = std::min<int64_t>(min, v);
      }
      int64_t expectInt = x.op == hoopSum   ? sum
                          : x.op == hoopMax ? max
                          : x.op == hoopMin ? min
                                            : sum / gSize;
      double expectFloat = x.op == hoopSum   ? static_cast<double>(sum) * 2 * 0.25
                           : x.op == hoopAvg ? static_cast<double>(sum) / gSize
                                             : static_cast<double>(expectInt);
      if (x.ints[i] != expectInt || x.floats[i] != static_cast<float>(expectFloat)) {
        expect(false, "tensor " + std::to_string(t) + " element " + std::to_string(i) + ": int " +
                          std::to_string(x.ints[i]) + " (expected " + std::to_string(expectInt) +
                          "), float " + std::to_string(x.floats[i]) + " (expected " +
                          std::to_string(expectFloat) + ")");
        return;
      }
    }
  }
}

// 100 tensors of 256 bytes, reduced twice: as one group (which reaches the negotiation in one
// cycle, so the packing is exact: ceil(100 * 256 / threshold) calls, each at most the threshold),
// then submitted one by one (which may straddle cycles: fewer calls than tensors, none over the
// threshold).
void fusionSuite(Engine& engine, size_t threshold) {
  constexpr size_t kTensors = 100;
  constexpr size_t kCount = 64;
  std::vector<std::vector<float>> data(kTensors);
  auto fill = [&] {
    for (size_t t = 0; t < kTensors; ++t) {
      data[t].clear();
      for (size_t i = 0; i < kCount; ++i) {
        data[t].push_back(static_cast<float>(valueOf(t, gRank, i)));
      }
    }
  };
  auto exact = [&](const char* how) {
    for (size_t t = 0; t < kTensors; ++t) {
      for (size_t i = 0; i < kCount; ++i) {
        float expected = 0;
        for (int r = 0; r < gSize; ++r) expected += static_cast<float>(valueOf(t, r, i));
        if (data[t][i] != expected) {
          expect(false, std::string(how) + " tensor " + std::to_string(t) + " element " +
                            std::to_string(i) + " = " + std::to_string(data[t][i]) + ", expected " +
                            std::to_string(expected));
          return;
        }
      }
    }
  };

  fill();
  std::vector<Engine::AllReduceRequest> group;
  for (size_t t = 0; t < kTensors; ++t) {
    group.push_back(
        {"group." + std::to_string(t), data[t].data(), data[t].data(), kCount, hoopFloat32});
  }
  for (Engine::Handle h : engine.groupedAllReduce(group, hoopSum)) engine.wait(h);
  exact("grouped");
  const auto grouped = engine.stats();

  fill();
  std::vector<Engine::Handle> handles;
  for (size_t t = 0; t < kTensors; ++t) {
    handles.push_back(engine.allReduce("solo." + std::to_string(t), data[t].data(), data[t].data(),
                                       kCount, hoopFloat32, hoopSum));
  }
  for (Engine::Handle h : handles) engine.wait(h);
  exact("one by one");
  const auto all = engine.stats();
  const size_t soloCalls = all.collectiveCalls - grouped.collectiveCalls;

  std::printf(
      "rank %d fusion: %zu tensors, threshold %zu: grouped: %zu calls, %zu fused, "
      "largest %zu B; one by one: %zu calls\n",
      gRank, kTensors, threshold, grouped.collectiveCalls, grouped.fusedTensors,
      grouped.largestFusedBytes, soloCalls);
  if (threshold == 0) {
    expect(grouped.collectiveCalls == kTensors && grouped.fusedTensors == 0 &&
               soloCalls == kTensors && all.fusedTensors == 0,
           "with fusion off every tensor is its own call");
    return;
  }
  // Greedy packing in order: as many whole tensors per call as fit.
  const size_t perCall = std::max<size_t>(1, threshold / (kCount * sizeof(float)));
  const size_t groupedCalls = (kTensors + perCall - 1) / perCall;
  const size_t alone = perCall == 1 ? kTensors : (kTensors % perCall == 1 ? 1 : 0);
  expect(grouped.collectiveCalls == groupedCalls && grouped.fusedTensors == kTensors - alone,
         "grouped: " + std::to_string(grouped.collectiveCalls) + " calls and " +
             std::to_string(grouped.fusedTensors) + " fused, expected " +
             std::to_string(groupedCalls) + " and " + std::to_string(kTensors - alone));
  expect(all.largestFusedBytes <= threshold, "a fused call exceeded the threshold");
  // One by one, the tensors may straddle cycles: at least as many calls, and some fusion left.
  expect(soloCalls >= groupedCalls && (soloCalls < kTensors || perCall == 1),
         "one by one: " + std::to_string(soloCalls) + " calls");
}

// After the first step, every name is agreed through the response cache: no more name exchange.
void cacheSuite(Engine& engine) {
  constexpr size_t kTensors = 10;
  constexpr size_t kSteps = 20;
  std::vector<std::vector<int64_t>> data(kTensors, std::vector<int64_t>(5));
  std::mt19937 random(static_cast<unsigned>(gRank));
  size_t roundsAfterFirstStep = 0;
  for (size_t step = 0; step < kSteps; ++step) {
    std::vector<size_t> order(kTensors);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random);
    std::vector<Engine::Handle> handles;
    for (size_t t : order) {
      std::fill(data[t].begin(), data[t].end(), static_cast<int64_t>(step * 100 + t + gRank));
      handles.push_back(engine.allReduce("cached." + std::to_string(t), data[t].data(),
                                         data[t].data(), data[t].size(), hoopInt64, hoopSum));
    }
    for (Engine::Handle h : handles) engine.wait(h);
    for (size_t t = 0; t < kTensors; ++t) {
      const int64_t expected = static_cast<int64_t>(gSize) * static_cast<int64_t>(step * 100 + t) +
                               static_cast<int64_t>(gSize) * (gSize - 1) / 2;
      expect(data[t][4] == expected, "step " + std::to_string(step) + " tensor " +
                                         std::to_string(t) + ": " + std::to_string(data[t][4]) +
                                         ", expected " + std::to_string(expected));
    }
    if (step == 0) roundsAfterFirstStep = engine.stats().negotiationRounds;
  }
  const auto stats = engine.stats();
  std::printf("rank %d cache: %zu cycles, %zu negotiation rounds (%zu after step 1), %zu hits\n",
              gRank, stats.cycles, stats.negotiationRounds, roundsAfterFirstStep, stats.cacheHits);
  expect(roundsAfterFirstStep >= 1, "the first step must negotiate by name");
  expect(stats.negotiationRounds == roundsAfterFirstStep,
         "later steps exchanged names: " + std::to_string(stats.negotiationRounds) + " rounds");
  expect(stats.cacheHits == (kSteps - 1) * kTensors,
         "cache hits " + std::to_string(stats.cacheHits) + ", expected " +
             std::to_string((kSteps - 1) * kTensors));
}

// Rank 1 never submits "lonely" (new) nor the second step of "cached" (known to the cache): both
// fail on the ranks that did, naming the tensor and rank 1; the engine keeps working afterwards.
void stallSuite(Engine& engine) {
  std::vector<float> a(8, 1.0f), b(8, 1.0f), c(8, 1.0f);
  engine.wait(engine.allReduce("cached", a.data(), a.data(), a.size(), hoopFloat32, hoopSum));
  if (gRank != 1) {
    const auto lonely =
        engine.allReduce("lonely", b.data(), b.data(), b.size(), hoopFloat32, hoopSum);
    const auto cached =
        engine.allReduce("cached", a.data(), a.data(), a.size(), hoopFloat32, hoopSum);
    for (auto [handle, name] : {std::pair{lonely, "'lonely'"}, std::pair{cached, "'cached'"}}) {
      const std::string error = errorOf([&] { engine.wait(handle); });
      std::printf("rank %d stall error: %s\n", gRank, error.c_str());
      expect(contains(error, name), "stall error does not name the tensor: " + error);
      expect(contains(error, "stalled: rank(s) 1 did not submit it"),
             "stall error does not name the missing rank: " + error);
    }
  }
  // Still usable: every rank takes part again. The others submit "after" once their errors are
  // out, about one stall time T (HOOP_STALL_CHECK_TIME=2) in; rank 1 submits it at 1.5 T, late
  // enough that the others do not time out on its early "after", early enough that its own
  // "after" does not: half a stall time of slack on either side.
  if (gRank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  engine.wait(engine.allReduce("after", c.data(), c.data(), c.size(), hoopFloat32, hoopSum));
  expect(c[0] == static_cast<float>(gSize), "allreduce after a stall gave " + std::to_string(c[0]));
}

// Rank r submits "bad" with 10 + r elements: every rank's handle fails naming the tensor and the
// shapes; the engine keeps working.
void mismatchSuite(Engine& engine) {
  std::vector<float> bad(10 + static_cast<size_t>(gRank), 1.0f);
  const auto handle =
      engine.allReduce("bad", bad.data(), bad.data(), bad.size(), hoopFloat32, hoopSum);
  const std::string error = errorOf([&] { engine.wait(handle); });
  std::printf("rank %d mismatch error: %s\n", gRank, error.c_str());
  expect(contains(error, "'bad'"), "mismatch error does not name the tensor: " + error);
  expect(contains(error, "rank 0: allreduce float[10] sum"), "rank 0's shape missing: " + error);
  expect(contains(error, "rank 1: allreduce float[11] sum"), "rank 1's shape missing: " + error);
  // A type or operation outside the C API's enums is refused at submission, before any rank
  // hears of it.
  std::vector<int32_t> good(3, gRank);
  const std::string badType = errorOf([&] {
    engine.allReduce("t", good.data(), good.data(), 3, static_cast<hoopDataType_t>(hoopNumTypes));
  });
  expect(contains(badType, "unknown data type 10"), "an unknown type was not refused: " + badType);
  const std::string badOp = errorOf([&] {
    engine.allReduce("o", good.data(), good.data(), 3, hoopInt32,
                     static_cast<hoopRedOp_t>(hoopNumOps));
  });
  expect(contains(badOp, "unknown reduction 5"), "an unknown op was not refused: " + badOp);
  engine.wait(engine.allReduce("good", good.data(), good.data(), 3, hoopInt32, hoopMax));
  expect(good[2] == gSize - 1, "allreduce after a mismatch gave " + std::to_string(good[2]));

  // synchronize() reports a failure once and keeps the failed handle for its own wait().
  std::vector<int32_t> fine(2, 1);
  const auto failing =
      engine.allReduce("bad", bad.data(), bad.data(), bad.size(), hoopFloat32, hoopSum);
  const auto succeeding = engine.allReduce("fine", fine.data(), fine.data(), 2, hoopInt32, hoopSum);
  const std::string first = errorOf([&] { engine.synchronize(); });
  expect(contains(first, "'bad'"), "synchronize() did not report the failure: " + first);
  expect(errorOf([&] { engine.synchronize(); }).empty(), "a failure was reported twice");
  expect(engine.poll(succeeding) && errorOf([&] { engine.wait(succeeding); }).empty(),
         "a released successful handle must wait() at once");
  expect(contains(errorOf([&] { engine.wait(failing); }), "'bad'"),
         "the failed handle lost its error");
  expect(fine[1] == gSize, "allreduce next to a failure gave " + std::to_string(fine[1]));

  // A group with a name twice is refused whole: neither name stays in flight.
  std::vector<int32_t> d1(1, 1), d2(1, 2);
  const std::string refused = errorOf([&] {
    engine.groupedAllReduce(
        {{"dup", d1.data(), d1.data(), 1, hoopInt32}, {"dup", d2.data(), d2.data(), 1, hoopInt32}});
  });
  expect(contains(refused, "'dup'") && contains(refused, "still in flight"),
         "a group with a repeated name must be refused: " + refused);
  engine.wait(engine.allReduce("dup", d1.data(), d1.data(), 1, hoopInt32, hoopSum));
  expect(d1[0] == gSize, "allreduce after a refused group gave " + std::to_string(d1[0]));
}

// Allgather with a different count per rank, broadcast from two roots, reduce-scatter,
// all-to-all and a barrier, all in flight together.
void collectivesSuite(Engine& engine) {
  const size_t ranks = static_cast<size_t>(gSize);
  const size_t self = static_cast<size_t>(gRank);
  std::vector<int32_t> mine(self + 1);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = static_cast<int32_t>(self * 100 + i);
  std::vector<int32_t> gathered;
  std::vector<size_t> counts;
  const auto gather = engine.allGather(
      "gather", mine.data(), mine.size(), hoopInt32,
      [&](const std::vector<size_t>& perRank) -> void* {
        counts = perRank;
        gathered.resize(std::accumulate(perRank.begin(), perRank.end(), size_t{0}));
        return gathered.data();
      });
  std::vector<double> fromFirst(4, gRank), fromLast(4, gRank);
  const auto bcast1 = engine.broadcast("bcast.first", fromFirst.data(), 4, hoopFloat64, 0);
  const auto bcast2 = engine.broadcast("bcast.last", fromLast.data(), 4, hoopFloat64, gSize - 1);
  std::vector<int64_t> scatterIn(ranks * 3), scatterOut(3);
  for (size_t i = 0; i < scatterIn.size(); ++i) scatterIn[i] = static_cast<int64_t>(i + self);
  const auto scatter =
      engine.reduceScatter("scatter", scatterIn.data(), scatterOut.data(), 3, hoopInt64, hoopSum);
  std::vector<int32_t> alltoallIn(ranks * 2), alltoallOut(ranks * 2);
  for (size_t i = 0; i < alltoallIn.size(); ++i) {
    alltoallIn[i] = static_cast<int32_t>(self * 1000 + i);
  }
  const auto alltoall =
      engine.allToAll("alltoall", alltoallIn.data(), alltoallOut.data(), 2, hoopInt32);
  // Uneven all-to-all: rank s sends s + d + 1 elements to rank d, valued s * 1000 + d * 100 + k.
  std::vector<size_t> sendCounts(ranks);
  std::vector<int32_t> unevenIn;
  for (size_t d = 0; d < ranks; ++d) {
    sendCounts[d] = self + d + 1;
    for (size_t k = 0; k < sendCounts[d]; ++k) {
      unevenIn.push_back(static_cast<int32_t>(self * 1000 + d * 100 + k));
    }
  }
  std::vector<int32_t> unevenOut;
  std::vector<size_t> unevenCounts;
  const auto uneven = engine.allToAll(
      "alltoallv", unevenIn.data(), sendCounts, hoopInt32,
      [&](const std::vector<size_t>& recvCounts) -> void* {
        unevenCounts = recvCounts;
        unevenOut.resize(std::accumulate(recvCounts.begin(), recvCounts.end(), size_t{0}));
        return unevenOut.data();
      });
  const auto barrier = engine.barrier("barrier");
  for (auto h : {barrier, uneven, alltoall, scatter, bcast2, bcast1, gather}) engine.wait(h);

  size_t next = 0;
  for (size_t s = 0; s < ranks; ++s) {
    expect(unevenCounts.size() == ranks && unevenCounts[s] == s + self + 1,
           "alltoallv count from rank " + std::to_string(s));
    for (size_t k = 0; k < s + self + 1 && next < unevenOut.size(); ++k, ++next) {
      expect(unevenOut[next] == static_cast<int32_t>(s * 1000 + self * 100 + k),
             "alltoallv element " + std::to_string(next) + " = " + std::to_string(unevenOut[next]));
    }
  }
  expect(next == unevenOut.size() && next == ranks * (ranks + 1) / 2 + ranks * self,
         "alltoallv size " + std::to_string(unevenOut.size()));

  size_t at = 0;
  for (size_t r = 0; r < ranks; ++r) {
    expect(counts.size() == ranks && counts[r] == r + 1, "allgather counts");
    for (size_t i = 0; i <= r && at < gathered.size(); ++i, ++at) {
      expect(gathered[at] == static_cast<int32_t>(r * 100 + i),
             "allgather element " + std::to_string(at) + " = " + std::to_string(gathered[at]));
    }
  }
  expect(at == ranks * (ranks + 1) / 2 && gathered.size() == at, "allgather size");
  expect(fromFirst[3] == 0.0 && fromLast[0] == gSize - 1.0, "broadcast values");
  for (size_t i = 0; i < 3; ++i) {
    const int64_t expected =
        static_cast<int64_t>(ranks * ((self * 3 + i)) + ranks * (ranks - 1) / 2);
    expect(scatterOut[i] == expected, "reduce-scatter element " + std::to_string(i) + " = " +
                                          std::to_string(scatterOut[i]) + ", expected " +
                                          std::to_string(expected));
  }
  for (size_t from = 0; from < ranks; ++from) {
    for (size_t i = 0; i < 2; ++i) {
      const int32_t expected = static_cast<int32_t>(from * 1000 + self * 2 + i);
      expect(alltoallOut[from * 2 + i] == expected, "alltoall block " + std::to_string(from));
    }
  }
}

// Rank r runs r + 2 steps, then joins: the others' later steps see its zeros, and join returns
// the last rank to join (the one with the most steps, the highest rank).
void joinSuite(Engine& engine) {
  const int steps = gRank + 2;
  for (int step = 0; step < steps; ++step) {
    std::vector<int32_t> g(16, gRank + 1);
    std::vector<float> f(3, static_cast<float>(gRank + 1));
    const auto h1 = engine.allReduce("g", g.data(), g.data(), g.size(), hoopInt32, hoopSum);
    const auto h2 = engine.allReduce("f", f.data(), f.data(), f.size(), hoopFloat32, hoopSum);
    // Each rank gathers rank + 1 copies of its rank; ranks that joined contribute nothing.
    const std::vector<int64_t> mine(static_cast<size_t>(gRank) + 1, gRank);
    std::vector<size_t> counts;
    std::vector<int64_t> all;
    const auto h3 =
        engine.allGather("ag", mine.data(), mine.size(), hoopInt64,
                         [&](const std::vector<size_t>& perRank) -> void* {
                           counts = perRank;
                           all.resize(std::accumulate(perRank.begin(), perRank.end(), size_t{0}));
                           return all.data();
                         });
    engine.wait(h1);
    engine.wait(h2);
    engine.wait(h3);
    std::vector<int64_t> expectedAll;
    for (int r = 0; r < gSize; ++r) {
      const size_t n = r + 2 > step ? static_cast<size_t>(r) + 1 : 0;
      expect(counts.size() == static_cast<size_t>(gSize) && counts[static_cast<size_t>(r)] == n,
             "allgather count of rank " + std::to_string(r) + " at step " + std::to_string(step));
      expectedAll.insert(expectedAll.end(), n, r);
    }
    expect(all == expectedAll, "allgather after a join at step " + std::to_string(step));
    // Ranks still stepping at this step: those with r + 2 > step.
    int expected = 0;
    for (int r = 0; r < gSize; ++r) expected += (r + 2 > step) ? r + 1 : 0;
    expect(g[15] == expected && f[0] == static_cast<float>(expected),
           "step " + std::to_string(step) + ": " + std::to_string(g[15]) + ", expected " +
               std::to_string(expected));
  }
  const int last = engine.join();
  expect(last == gSize - 1, "join returned " + std::to_string(last));
  // A second epoch after the join works normally.
  std::vector<int32_t> x(2, 1);
  engine.wait(engine.allReduce("g", x.data(), x.data(), 2, hoopInt32, hoopSum));
  expect(x[1] == gSize, "allreduce after join gave " + std::to_string(x[1]));
  const int again = engine.join();
  expect(again >= 0 && again < gSize, "second join returned " + std::to_string(again));
}

// Parameters start different on every rank; broadcastParameters makes them root's; the
// GradientReducer averages per-rank gradients in place, with some marked ready and the rest left
// to synchronize().
void reducerSuite(Engine& engine) {
  std::vector<float> w1(6, static_cast<float>(gRank * 3));
  std::vector<double> w2(2, gRank + 0.5);
  const hoop::train::NamedBuffer params[] = {{"w1", w1.data(), w1.size(), hoopFloat32},
                                             {"w2", w2.data(), w2.size(), hoopFloat64}};
  hoop::train::broadcastParameters(engine, params, 1 % gSize);
  expect(w1[5] == static_cast<float>((1 % gSize) * 3) && w2[1] == (1 % gSize) + 0.5,
         "parameters after broadcast");

  std::vector<float> g1(100), g2(7);
  std::vector<int32_t> g3(5);
  hoop::train::GradientReducer reducer(engine, hoopAvg);
  reducer.registerBuffer("g1", g1.data(), g1.size(), hoopFloat32);
  reducer.registerBuffer("g2", g2.data(), g2.size(), hoopFloat32);
  reducer.registerBuffer("g3", g3.data(), g3.size(), hoopInt32);
  for (int step = 0; step < 5; ++step) {
    std::fill(g1.begin(), g1.end(), static_cast<float>(gRank * 2 + step));
    std::fill(g2.begin(), g2.end(), static_cast<float>(gRank * 4));
    std::fill(g3.begin(), g3.end(), gRank * 6 + step);
    if (gRank % 2 == 0) {
      reducer.ready("g2");
      reducer.ready("g1");
    } else {
      reducer.ready("g3");
    }
    reducer.synchronize();
    // Means of integers spaced so every average is exact.
    const float mean1 = static_cast<float>((gSize - 1) + step);
    expect(g1[99] == mean1 && g2[0] == static_cast<float>(2 * (gSize - 1)) &&
               g3[4] == 3 * (gSize - 1) + step,
           "reduced gradients at step " + std::to_string(step));
  }
  const std::string twice = errorOf([&] {
    reducer.ready("g1");
    reducer.ready("g1");
  });
  expect(contains(twice, "already being reduced"), "second ready() must throw: " + twice);
  reducer.synchronize();
}

// whenDone: callbacks complete requests without a waiting thread, may submit more requests, run at
// once for a request that already finished, and receive failures instead of wait() throwing them.
void callbacksSuite(Engine& engine) {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> outcomes;  // "name:code:message" per completed callback
  auto record = [&](const std::string& name) {
    return [&, name](hoopResult_t code, const std::string& message) {
      std::lock_guard lock(mutex);
      outcomes.push_back(name + ":" + std::to_string(code) + ":" + message);
      changed.notify_all();
    };
  };
  auto waitFor = [&](size_t count) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return outcomes.size() >= count; });
  };

  std::vector<int32_t> a(8, gRank + 1), b(8, 10 * (gRank + 1));
  const int32_t sum = gSize * (gSize + 1) / 2;
  // The callback of "a" submits "b" from the engine's thread and hands it a callback too.
  const auto first = engine.allReduce("a", a.data(), a.data(), a.size(), hoopInt32, hoopSum);
  engine.whenDone(first, [&](hoopResult_t code, const std::string& message) {
    record("a")(code, message);
    const auto second = engine.allReduce("b", b.data(), b.data(), b.size(), hoopInt32, hoopSum);
    engine.whenDone(second, record("b"));
  });
  waitFor(2);
  expect(outcomes[0] == "a:0:" && outcomes[1] == "b:0:", "callbacks in order, both successful");
  expect(a[7] == sum && b[0] == 10 * sum, "results visible when the callback runs");

  // Already finished: the callback runs on this thread before whenDone returns.
  const auto late = engine.allReduce("late", a.data(), a.data(), 1, hoopInt32, hoopMax);
  while (!engine.poll(late)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  engine.whenDone(late, record("late"));
  expect(outcomes.size() == 3 && outcomes[2] == "late:0:", "late callback runs at once");
  expect(contains(errorOf([&] { engine.whenDone(late, record("again")); }), "already"),
         "a released handle cannot take a second callback");

  // A failure reaches the callback with its code and message; nothing throws.
  std::vector<float> odd(static_cast<size_t>(4 + gRank), 1.0f);
  const auto bad = engine.allReduce("odd", odd.data(), odd.data(), odd.size(), hoopFloat32);
  engine.whenDone(bad, record("odd"));
  waitFor(4);
  expect(contains(outcomes[3], "odd:") && !contains(outcomes[3], "odd:0:") &&
             contains(outcomes[3], "different shapes"),
         "mismatch reaches the callback: " + outcomes[3]);
  engine.synchronize();  // the callbacks' handles are released, so nothing is left to report
}

}  // namespace

int main(int argc, char** argv) {
  std::string suite = argc > 1 ? argv[1] : "";
  try {
    auto comm = hoop::Communicator::fromEnvironment();
    gRank = comm.rank();
    gSize = comm.size();
    EngineOptions options = EngineOptions::fromEnvironment();
    if (suite == "options-mismatch") {
      options.fusionThresholdBytes = gRank == 1 ? 1000 : 2000;
      const std::string error = errorOf([&] { Engine engine(comm.handle(), options); });
      std::printf("rank %d options error: %s\n", gRank, error.c_str());
      expect(contains(error, "rank 1 has HOOP_FUSION_THRESHOLD=1000"),
             "mismatched options must fail naming the rank and the value: " + error);
      // The communicator is still usable without an engine.
      options.fusionThresholdBytes = 2000;
      Engine engine(comm.handle(), options);
      std::printf("OK rank %d %s\n", gRank, suite.c_str());
      return gFailed ? 1 : 0;
    }
    if (suite == "reducer") {
      // broadcastParameters straight on the communicator, before any engine uses it.
      std::vector<int16_t> weights(5, static_cast<int16_t>(gRank + 1));
      const hoop::train::NamedBuffer direct[] = {{"w", weights.data(), 5, hoopFloat16}};
      hoop::train::broadcastParameters(comm.handle(), direct, gSize - 1);
      expect(weights[4] == gSize, "broadcastParameters on the communicator");
    }
    {
      Engine engine(comm.handle(), options);
      if (suite == "shuffled") {
        shuffledSuite(engine);
      } else if (suite == "fusion") {
        fusionSuite(engine, options.fusionThresholdBytes);
      } else if (suite == "cache") {
        cacheSuite(engine);
      } else if (suite == "stall") {
        stallSuite(engine);
      } else if (suite == "mismatch") {
        mismatchSuite(engine);
      } else if (suite == "callbacks") {
        callbacksSuite(engine);
      } else if (suite == "collectives") {
        collectivesSuite(engine);
      } else if (suite == "join") {
        joinSuite(engine);
      } else if (suite == "reducer") {
        reducerSuite(engine);
      } else if (suite == "stop-join") {
        // Every rank but 0 shuts its engine down at once; rank 0's join still completes (a
        // stopping rank has no more data), and then the shutdown completes everywhere.
        if (gRank == 0) {
          const int last = engine.join();
          expect(last == 0, "join returned " + std::to_string(last));
        }
      } else if (suite == "idle") {
        // Nothing submitted for two seconds: for measuring what the cycles cost when idle.
        std::this_thread::sleep_for(std::chrono::seconds(2));
        std::printf("rank %d idle: %zu cycles\n", gRank, engine.stats().cycles);
      } else if (suite == "dead-peer") {
        // Rank 1 vanishes without a word; the others' requests fail instead of hanging.
        if (gRank == 1) _exit(0);
        std::vector<float> x(4, 1.0f);
        const auto h = engine.allReduce("x", x.data(), x.data(), 4, hoopFloat32, hoopSum);
        const std::string error = errorOf([&] { engine.wait(h); });
        std::printf("rank %d dead-peer error: %s\n", gRank, error.c_str());
        expect(contains(error, "'x'"), "dead-peer error does not name the tensor: " + error);
        std::fflush(stdout);
        _exit(gFailed ? 1 : 0);  // the communicator is broken: skip the collective shutdown
      } else {
        std::fprintf(stderr, "unknown suite '%s'\n", suite.c_str());
        return 2;
      }
    }
  } catch (const hoop::Exception& e) {
    std::printf("FAIL rank %d: hoop::Exception: %s\n", gRank, e.what());
    return 1;
  }
  if (gFailed) return 1;
  std::printf("OK rank %d %s\n", gRank, suite.c_str());
  return 0;
}
