#include "collective.h"

#include "base/types.h"

namespace hoop::perf {
namespace {

OpKind collectiveKind(Collective coll) {
  switch (coll) {
    case Collective::kAllReduce: return OpKind::kAllReduce;
    case Collective::kAllGather: return OpKind::kAllGather;
    case Collective::kBroadcast: return OpKind::kBroadcast;
    case Collective::kReduce: return OpKind::kReduce;
    case Collective::kReduceScatter: return OpKind::kReduceScatter;
    case Collective::kSendRecv: return OpKind::kSendRecv;
    case Collective::kAllToAll: return OpKind::kAllToAll;
  }
  return OpKind::kAllReduce;
}

}  // namespace

// The one-word spelling of the project's table is nccl-tests' (sendrecv, not send/recv).
std::string_view collectiveName(Collective coll) { return opKindWord(collectiveKind(coll)); }

std::optional<Collective> parseCollectiveName(std::string_view name) {
  const std::optional<OpKind> kind = parseOpKind(name);
  for (Collective coll : kAllCollectives) {
    if (kind && collectiveKind(coll) == *kind) return coll;
  }
  return std::nullopt;
}

bool collectiveReduces(Collective coll) {
  return coll == Collective::kAllReduce || coll == Collective::kReduce ||
         coll == Collective::kReduceScatter;
}

bool collectiveHasRoot(Collective coll) {
  return coll == Collective::kBroadcast || coll == Collective::kReduce;
}

RowCounts rowCounts(Collective coll, size_t sizeBytes, size_t typeSize, int nranks) {
  const size_t elements = sizeBytes / typeSize;
  if (coll == Collective::kAllGather || coll == Collective::kReduceScatter ||
      coll == Collective::kAllToAll) {
    const size_t perRank = elements / static_cast<size_t>(nranks);
    return {perRank, perRank * static_cast<size_t>(nranks) * typeSize};
  }
  return {elements, elements * typeSize};
}

double busBwFactor(Collective coll, int nranks) {
  const double n = nranks;
  switch (coll) {
    case Collective::kAllReduce: return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    // alltoall: each rank keeps its own block and sends the other n-1 over its link.
    case Collective::kAllToAll: return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1.0;
  }
  return 1.0;
}

}  // namespace hoop::perf
