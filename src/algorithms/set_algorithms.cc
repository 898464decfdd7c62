// hoopCommSetAlgorithms on every rank: the ranks check that they all passed the same rules, then
// each adopts them for its later calls. The ranks of a collective must run the same schedule (a
// rank running the ring beside one running the tree would trade the wrong pieces), so a text
// that differs on any rank fails the call on every rank, naming a rank that passed it.
#include <cstdint>
#include <string_view>
#include <vector>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/primitives.h"
#include "core/communicator.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/logging.h"

namespace hoop {
namespace {

// Every rank's digest, by rank: each rank passes on the digest it received last, n - 1 times
// round the ring, so every digest reaches every rank.
std::vector<uint64_t> everyRanksDigest(Communicator& comm, const FrameTag& tag, uint64_t mine) {
  const Ring& ring = comm.ring();
  std::vector<uint64_t> digests(ring.size());
  digests[static_cast<size_t>(comm.rank())] = mine;
  Primitives prims(comm, tag, DataType::kInt8, RedOp::kSum, 0);
  uint64_t passing = mine;
  for (size_t step = 1; step < ring.size(); ++step) {
    uint64_t received = 0;
    prims.sendRecv(ring.next(), &passing, sizeof(passing), ring.prev(), &received,
                   sizeof(received));
    digests[static_cast<size_t>(ring.at(ring.behind(step)))] = received;
    passing = received;
  }
  prims.finish();
  return digests;
}

}  // namespace

void setAlgorithms(Communicator& comm, AlgoOverrides rules) {
  const uint32_t seq = comm.nextCollectiveSeq();
  comm.beginOperation(OpKind::kSetAlgorithms, seq);
  const std::vector<uint64_t> digests =
      everyRanksDigest(comm, {OpKind::kSetAlgorithms, seq}, fnv1a(rules.text()));
  // The lowest rank whose text differs from rank 0's: the same rank on every rank.
  for (size_t r = 1; r < digests.size(); ++r) {
    if (digests[r] != digests[0]) {
      fail(hoopInvalidUsage, "hoopCommSetAlgorithms (call #", seq, ") on rank ", comm.rank(),
           ": rank ", r,
           " passed other rules than rank 0; every rank must pass the same (this "
           "rank passed \"",
           rules.text(), "\")");
    }
  }
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), "schedules forced from call #", seq + 1,
      " on: ", rules.empty() ? std::string_view("none (hoop's own choice)") : rules.text());
  comm.adoptAlgorithms(std::move(rules));
}

}  // namespace hoop
