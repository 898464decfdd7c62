// hoopCommSetAlgorithms on every rank: the ranks check that they all passed the same rules, then
// each adopts them for its later calls. The ranks of a collective must run the same schedule (a
// rank running the ring beside one running the tree would trade the wrong pieces), so a text
// that differs on any rank fails the call on every rank, naming a rank that passed it.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/algo_overrides.h"
#include "algorithms/collective.h"
#include "algorithms/team.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/logging.h"

namespace hoop {

void setAlgorithms(Team& comm, AlgoOverrides rules) {
  const uint32_t seq = comm.nextCollectiveSeq();
  comm.beginOperation(OpKind::kSetAlgorithms, seq);
  // Every rank's digest of its text, by rank: the ring allgather, under this call's own tag.
  const uint64_t digest = fnv1a(rules.text());
  std::vector<uint64_t> digests(static_cast<size_t>(comm.size()));
  CollectiveArgs gather;
  gather.kind = OpKind::kSetAlgorithms;
  gather.send = &digest;
  gather.recv = digests.data();
  gather.count = 1;
  gather.type = DataType::kUint64;
  gather.seq = seq;
  ringAllGather(comm, gather);
  // The lowest rank whose text differs from rank 0's: the same rank on every rank.
  for (size_t r = 1; r < digests.size(); ++r) {
    if (digests[r] != digests[0]) {
      fail(hoopInvalidUsage, "hoopCommSetAlgorithms (call #", seq, ") on rank ", comm.rank(),
           ": rank ", r, " passed other rules than rank 0; every rank must pass the same",
           " (this rank passed \"", rules.text(), "\")");
    }
  }
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), "schedules forced from call #", seq + 1,
      " on: ", rules.empty() ? std::string_view("none (hoop's own choice)") : rules.text());
  comm.adoptAlgorithms(std::move(rules));
}

}  // namespace hoop
