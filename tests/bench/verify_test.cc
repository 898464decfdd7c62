// The check's bookkeeping per collective and placement, against a perfect library simulated in
// this process: every rank's buffers side by side, the collective computed from its definition.
#include "verify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dtype.h"

namespace hoop::perf {
namespace {

double load(hoopDataType_t type, const void* base, size_t index) {
  return visitType(
      type, [&](auto zero) { return toDouble(static_cast<const decltype(zero)*>(base)[index]); });
}

void store(hoopDataType_t type, void* base, size_t index, double value) {
  visitType(type, [&](auto zero) {
    using T = decltype(zero);
    static_cast<T*>(base)[index] = fromInteger<T>(static_cast<int64_t>(value));
  });
}

double reduce(hoopRedOp_t op, const std::vector<double>& values) {
  double result = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    switch (op) {
      case hoopProd: result *= values[i]; break;
      case hoopMax: result = std::max(result, values[i]); break;
      case hoopMin: result = std::min(result, values[i]); break;
      default: result += values[i]; break;
    }
  }
  return op == hoopAvg ? result / static_cast<double>(values.size()) : result;
}

// Runs calls[r] on buffers[r] for every rank r as a correct library would. Results are computed
// from all inputs before any is written, since in-place outputs overlap inputs.
void simulate(const std::vector<CallSpec>& calls, const std::vector<BufferPair>& buffers) {
  const CallSpec& call = calls[0];
  const size_t n = calls.size();
  const size_t count = call.count;
  std::vector<CallBuffers> at;
  for (size_t r = 0; r < n; ++r) at.push_back(callBuffers(calls[r], buffers[r]));
  auto reduceAt = [&](size_t index) {
    std::vector<double> values;
    for (size_t r = 0; r < n; ++r) values.push_back(load(call.type, at[r].send, index));
    return reduce(call.op, values);
  };
  switch (call.collective) {
    case Collective::kAllReduce:
    case Collective::kReduce: {
      std::vector<double> result(count);
      for (size_t i = 0; i < count; ++i) result[i] = reduceAt(i);
      for (size_t r = 0; r < n; ++r) {
        if (call.collective == Collective::kReduce && static_cast<int>(r) != call.root) continue;
        for (size_t i = 0; i < count; ++i) store(call.type, at[r].recv, i, result[i]);
      }
      return;
    }
    case Collective::kReduceScatter: {
      std::vector<double> result(count * n);
      for (size_t j = 0; j < count * n; ++j) result[j] = reduceAt(j);
      for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) store(call.type, at[r].recv, i, result[r * count + i]);
      }
      return;
    }
    case Collective::kBroadcast: {
      std::vector<double> data(count);
      for (size_t i = 0; i < count; ++i) data[i] = load(call.type, at[call.root].send, i);
      for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) store(call.type, at[r].recv, i, data[i]);
      }
      return;
    }
    case Collective::kAllGather: {
      std::vector<double> data(count * n);
      for (size_t q = 0; q < n; ++q) {
        for (size_t i = 0; i < count; ++i) data[q * count + i] = load(call.type, at[q].send, i);
      }
      for (size_t r = 0; r < n; ++r) {
        for (size_t j = 0; j < count * n; ++j) store(call.type, at[r].recv, j, data[j]);
      }
      return;
    }
    case Collective::kAllToAll: {
      // data[q][j]: rank q's send buffer, read whole before any (in-place) write.
      std::vector<std::vector<double>> data(n, std::vector<double>(count * n));
      for (size_t q = 0; q < n; ++q) {
        for (size_t j = 0; j < count * n; ++j) data[q][j] = load(call.type, at[q].send, j);
      }
      // Rank r's block q is block r of rank q's send buffer.
      for (size_t r = 0; r < n; ++r) {
        for (size_t q = 0; q < n; ++q) {
          for (size_t i = 0; i < count; ++i) {
            store(call.type, at[r].recv, q * count + i, data[q][r * count + i]);
          }
        }
      }
      return;
    }
    case Collective::kSendRecv: {
      std::vector<std::vector<double>> data(n, std::vector<double>(count));
      for (size_t q = 0; q < n; ++q) {
        for (size_t i = 0; i < count; ++i) data[q][i] = load(call.type, at[q].send, i);
      }
      for (size_t r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) {
          store(call.type, at[r].recv, i, data[(r + n - 1) % n][i]);
        }
      }
      return;
    }
  }
}

struct Case {
  Collective collective;
  hoopDataType_t type;
  hoopRedOp_t op;
  int root;
  int nranks;
  size_t count;
  bool inPlace;

  std::string describe() const {
    return std::string(collectiveName(collective)) + " " + std::string(typeName(type)) + " " +
           std::string(opName(op)) + " root " + std::to_string(root) + " nranks " +
           std::to_string(nranks) + " count " + std::to_string(count) +
           (inPlace ? " in-place" : " out-of-place");
  }
};

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (Collective coll : kAllCollectives) {
    for (hoopDataType_t type : {hoopInt8, hoopUint64, hoopHalf, hoopFloat, hoopBfloat16}) {
      const std::vector<hoopRedOp_t> ops =
          collectiveReduces(coll) ? std::vector<hoopRedOp_t>(std::begin(kAllOps), std::end(kAllOps))
                                  : std::vector<hoopRedOp_t>{hoopSum};
      for (hoopRedOp_t op : ops) {
        for (int nranks : {1, 2, 3, 4}) {
          const std::vector<int> roots =
              collectiveHasRoot(coll) ? std::vector<int>{0, nranks - 1} : std::vector<int>{0};
          for (int root : roots) {
            for (size_t count : {size_t{0}, size_t{1}, size_t{5}, size_t{17}}) {
              for (bool inPlace : {false, true}) {
                cases.push_back({coll, type, op, root, nranks, count, inPlace});
              }
            }
          }
        }
      }
    }
  }
  return cases;
}

// Every rank's buffers for one case, each as large as the whole nranks-block buffer.
class World {
 public:
  explicit World(const Case& c) {
    const size_t bytes = c.count * static_cast<size_t>(c.nranks) * typeSize(c.type);
    for (int r = 0; r < c.nranks; ++r) {
      send_.emplace_back(bytes);
      recv_.emplace_back(bytes);
      buffers_.push_back({send_.back().data(), recv_.back().data()});
      calls_.push_back({c.collective, c.type, c.op, c.root, c.count, r, c.nranks, c.inPlace});
      patterns_.push_back(checkPattern(calls_.back(), 1234));
    }
    for (int r = 0; r < c.nranks; ++r) prepareCheck(calls_[r], patterns_[r], buffers_[r]);
  }
  void runCollective() { simulate(calls_, buffers_); }
  size_t wrong(int rank) const { return countWrong(calls_[rank], patterns_[rank], buffers_[rank]); }
  size_t wrongTotal() const {
    size_t total = 0;
    for (size_t r = 0; r < calls_.size(); ++r) total += wrong(static_cast<int>(r));
    return total;
  }
  void corrupt(int rank) { corruptResult(calls_[rank], buffers_[rank]); }

 private:
  std::vector<HostBuffer> send_, recv_;
  std::vector<BufferPair> buffers_;
  std::vector<CallSpec> calls_;
  std::vector<DataPattern> patterns_;
};

TEST(Verify, CorrectResultsCountNoWrongElements) {
  for (const Case& c : allCases()) {
    World world(c);
    world.runCollective();
    EXPECT_EQ(world.wrongTotal(), 0u) << c.describe();
  }
}

TEST(Verify, SkippedCollectiveIsCaught) {
  for (const Case& c : allCases()) {
    if (c.nranks < 2 || c.count != 17) continue;
    World world(c);  // inputs written and outputs poisoned, but the collective never runs
    EXPECT_GT(world.wrongTotal(), 0u) << c.describe();
  }
}

TEST(Verify, CorruptionFlipsExactlyOneElementOfRank0sResult) {
  for (const Case& c : allCases()) {
    World world(c);
    world.runCollective();
    world.corrupt(0);
    const bool rank0HasResult = !(c.collective == Collective::kReduce && c.root != 0);
    const size_t expected = rank0HasResult && c.count > 0 ? 1 : 0;
    EXPECT_EQ(world.wrong(0), expected) << c.describe();
    EXPECT_EQ(world.wrongTotal(), expected) << c.describe();
  }
}

// An alltoall that moves the right blocks to the wrong places must not pass: each rank keeping its
// own send buffer (no exchange), and each rank receiving the blocks in the wrong order.
TEST(Verify, MisroutedAllToAllIsCaught) {
  for (bool inPlace : {false, true}) {
    for (int nranks : {2, 3, 4}) {
      for (hoopDataType_t type : {hoopInt8, hoopHalf, hoopBfloat16, hoopDouble}) {
        const Case c{Collective::kAllToAll, type, hoopSum, 0, nranks, 17, inPlace};
        const size_t blockBytes = c.count * typeSize(type);
        const size_t n = static_cast<size_t>(nranks);
        std::vector<HostBuffer> send, recv;
        std::vector<BufferPair> buffers;
        std::vector<CallSpec> calls;
        for (int r = 0; r < nranks; ++r) {
          send.emplace_back(blockBytes * n);
          recv.emplace_back(blockBytes * n);
          buffers.push_back({send.back().data(), recv.back().data()});
          calls.push_back({c.collective, type, c.op, 0, c.count, r, nranks, inPlace});
        }
        const DataPattern pattern = checkPattern(calls[0], 99);
        auto wrongAfter = [&](auto misroute) {
          size_t wrong = 0;
          for (int r = 0; r < nranks; ++r) prepareCheck(calls[r], pattern, buffers[r]);
          simulate(calls, buffers);
          for (int r = 0; r < nranks; ++r) misroute(r);
          for (int r = 0; r < nranks; ++r) wrong += countWrong(calls[r], pattern, buffers[r]);
          return wrong;
        };
        // The right exchange passes.
        EXPECT_EQ(wrongAfter([](int) {}), 0u) << c.describe();
        // Each rank's send buffer copied to its receive buffer: only the own block is right.
        const size_t copied = wrongAfter([&](int r) {
          fillInputs(type, callBuffers(calls[r], buffers[r]).recv, c.count * n, pattern, r, 0);
        });
        EXPECT_GT(copied, c.count * (n - 1) * n / 2) << c.describe();
        // Blocks 0 and 1 swapped at every rank.
        const size_t swapped = wrongAfter([&](int r) {
          auto* recvBase = static_cast<std::byte*>(callBuffers(calls[r], buffers[r]).recv);
          std::vector<std::byte> block(recvBase, recvBase + blockBytes);
          std::copy(recvBase + blockBytes, recvBase + 2 * blockBytes, recvBase);
          std::copy(block.begin(), block.end(), recvBase + blockBytes);
        });
        EXPECT_GT(swapped, c.count * n) << c.describe();
      }
    }
  }
}

TEST(Verify, InPlaceFollowsNcclOffsets) {
  std::vector<unsigned char> send(4096), recv(4096);
  const BufferPair buffers{send.data(), recv.data()};
  CallSpec call{Collective::kAllGather, hoopFloat, hoopSum, 0, 10, 3, 4, true};
  CallBuffers at = callBuffers(call, buffers);
  EXPECT_EQ(at.recv, recv.data());
  EXPECT_EQ(at.send, recv.data() + 3 * 10 * 4);

  call.collective = Collective::kReduceScatter;
  at = callBuffers(call, buffers);
  EXPECT_EQ(at.send, recv.data());
  EXPECT_EQ(at.recv, recv.data() + 3 * 10 * 4);

  for (Collective coll : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce,
                          Collective::kSendRecv, Collective::kAllToAll}) {
    call.collective = coll;
    at = callBuffers(call, buffers);
    EXPECT_EQ(at.send, recv.data());
    EXPECT_EQ(at.recv, recv.data());
  }

  call.inPlace = false;
  at = callBuffers(call, buffers);
  EXPECT_EQ(at.send, send.data());
  EXPECT_EQ(at.recv, recv.data());
}

}  // namespace
}  // namespace hoop::perf
