// A transport registered from the test tree (a pair of named pipes per peer) carries hoop's
// collectives: the registry finds it by name, HOOP_TRANSPORT chooses it, the communicator connects
// and drives it, and the schedules run over it, with no edit to any of them. Ranks are threads of
// this process with real communicators, real TCP links and real pipes.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/collective.h"
#include "core/communicator.h"
#include "hoop/hoop.h"
#include "loopback_pipe_transport.h"
#include "scoped_env.h"
#include "transport/shm/shm_connection.h"
#include "transport/transport_registry.h"

namespace hoop {
namespace {

test::LoopbackPipeTransport& registeredPipe() {
  static test::LoopbackPipeTransport* pipe = [] {
    auto transport = std::make_unique<test::LoopbackPipeTransport>();
    test::LoopbackPipeTransport* kept = transport.get();
    TransportRegistry::global().add(std::move(transport), 5);
    return kept;
  }();
  return *pipe;
}

// Rank r contributes r + 1 + i at element i: integer-valued, so every order of additions gives
// the same, exact answer.
std::vector<int32_t> contribution(int rank, size_t count) {
  std::vector<int32_t> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<int32_t>(rank + 1 + (i % 1000));
  return data;
}

std::string runRank(const BootstrapId& id, int nranks, int rank, const Config& config) {
  std::unique_ptr<Communicator> comm = Communicator::create(id, nranks, rank, nullptr, config);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    if (dynamic_cast<ShmConnection*>(&comm->connection(peer)) != nullptr)
      return str("rank ", rank, ": shm to ", peer);
  }
  if (comm->everyPeerSharesMemory()) return str("rank ", rank, ": one-shot schedules allowed");
  // Small (one piece) and large (many pieces, more than a pipe's buffer in flight).
  for (size_t count : {size_t{1}, size_t{1000}, size_t{300'000}}) {
    std::vector<int32_t> data = contribution(rank, count);
    CollectiveArgs args;
    args.kind = OpKind::kAllReduce;
    args.send = data.data();
    args.recv = data.data();
    args.count = count;
    args.type = DataType::kInt32;
    args.op = RedOp::kSum;
    runCollective(*comm, args);
    std::vector<int32_t> expected(count, 0);
    for (int r = 0; r < nranks; ++r) {
      const std::vector<int32_t> theirs = contribution(r, count);
      for (size_t i = 0; i < count; ++i) expected[i] += theirs[i];
    }
    for (size_t i = 0; i < count; ++i) {
      if (data[i] != expected[i]) {
        return str("rank ", rank, ": allreduce of ", count, " at ", i, ": ", data[i], " not ",
                   expected[i]);
      }
    }
  }
  std::vector<int32_t> mine = contribution(rank, 4096);
  std::vector<int32_t> gathered(4096 * static_cast<size_t>(nranks));
  CollectiveArgs gather;
  gather.kind = OpKind::kAllGather;
  gather.send = mine.data();
  gather.recv = gathered.data();
  gather.count = mine.size();
  gather.type = DataType::kInt32;
  runCollective(*comm, gather);
  for (int r = 0; r < nranks; ++r) {
    const std::vector<int32_t> theirs = contribution(r, 4096);
    if (!std::equal(theirs.begin(), theirs.end(), gathered.begin() + r * 4096)) {
      return str("rank ", rank, ": allgather block ", r, " differs");
    }
  }
  return "";
}

TEST(RegisteredTransport, APipeTransportFromTheTestTreeCarriesCollectives) {
  test::LoopbackPipeTransport& pipe = registeredPipe();
  test::ScopedEnv transport("HOOP_TRANSPORT", "pipe");
  hoopUniqueId uid;
  ASSERT_EQ(hoopGetUniqueId(&uid), hoopSuccess) << hoopGetLastError(nullptr);
  const BootstrapId id = BootstrapId::decode(uid);
  const Config config = Config::fromEnvironment();
  constexpr int kRanks = 3;
  const int before = pipe.connectionsMade();
  std::vector<std::string> failures(kRanks);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < kRanks; ++rank) {
    ranks.emplace_back([&, rank] {
      try {
        failures[static_cast<size_t>(rank)] = runRank(id, kRanks, rank, config);
      } catch (const std::exception& e) {
        failures[static_cast<size_t>(rank)] = str("rank ", rank, ": ", e.what());
      }
    });
  }
  for (std::thread& t : ranks) t.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  // Every rank connected to both others through the pipes, and to nobody another way.
  EXPECT_EQ(pipe.connectionsMade() - before, kRanks * (kRanks - 1));
}

TEST(RegisteredTransport, ItsNameJoinsHoopTransportsGrammar) {
  registeredPipe();
  EXPECT_TRUE(TransportPolicy::parse("pipe,tcp").allows("pipe"));
  EXPECT_FALSE(TransportPolicy::parse("^pipe").allows("pipe"));
  const PeerPair acrossHosts{0, 1, false, "rank 1 (host b)"};
  try {
    chooseTransport(TransportPolicy::parse("pipe"), acrossHosts);
    ADD_FAILURE() << "pipe chosen across hosts";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pipe needs both ranks on one host"),
              std::string::npos)
        << error.what();
  }
  // Without it in the setting, the built-in choice is unchanged.
  EXPECT_EQ(chooseTransport(TransportPolicy::parse("^pipe"), {0, 1, true, "rank 1"}).name(), "shm");
}

}  // namespace
}  // namespace hoop
