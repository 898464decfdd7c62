// The collectives hoop-perf measures: names, which take an op or a root, element counts per size
// and the bus-bandwidth factor, all as nccl-tests defines them so the numbers compare one to one.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace hoop::perf {

enum class Collective {
  kAllReduce,
  kAllGather,
  kBroadcast,
  kReduce,
  kReduceScatter,
  kSendRecv,
  kAllToAll
};

inline constexpr Collective kAllCollectives[] = {
    Collective::kAllReduce,     Collective::kAllGather, Collective::kBroadcast, Collective::kReduce,
    Collective::kReduceScatter, Collective::kSendRecv,  Collective::kAllToAll};

std::string_view collectiveName(Collective coll);
std::optional<Collective> parseCollectiveName(std::string_view name);

// allreduce, reduce and reducescatter combine values; the others only move them (redop "none").
bool collectiveReduces(Collective coll);
// broadcast and reduce have a root; the table shows -1 for the others.
bool collectiveHasRoot(Collective coll);

// What one row of the sweep moves, derived from its size in bytes. count is the count argument of
// the hoop call (per rank for allgather and reducescatter, per peer for alltoall: their buffers
// hold nranks blocks); bytes is the size the table shows and algbw divides by: the whole buffer,
// nranks * count elements for those three (nccl-tests' convention).
struct RowCounts {
  size_t count = 0;
  size_t bytes = 0;
};
RowCounts rowCounts(Collective coll, size_t sizeBytes, size_t typeSize, int nranks);

// busbw = algbw * factor: the fraction of the data each rank's link carries in a bandwidth-optimal
// algorithm, so busbw is comparable to the hardware's link speed whatever the rank count.
double busBwFactor(Collective coll, int nranks);

}  // namespace hoop::perf
