#include "core/comm_split.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "algorithms/collective.h"
#include "base/error.h"
#include "base/logging.h"
#include "core/communicator.h"

namespace hoop {
namespace {

// "hspl": tells a split's record from the data of another allgather of the same shape.
constexpr int32_t kSplitTag = 0x6c707368;

// One rank's record in the first allgather.
struct Record {
  int32_t tag = kSplitTag;
  int32_t color = kNoColor;
  int32_t key = 0;
  int32_t refusal = 0;
};
static_assert(sizeof(Record) == 4 * sizeof(int32_t));

// Allgathers `bytes` bytes per rank on the parent's host memory.
void gather(Communicator& parent, const void* mine, void* all, size_t bytes) {
  CollectiveArgs args;
  args.kind = OpKind::kAllGather;
  args.send = mine;
  args.recv = all;
  args.count = bytes;
  args.type = DataType::kUint8;
  runCollective(parent, args);
}

std::string refusalText(const Record& record) {
  switch (static_cast<SplitRefusal>(record.refusal)) {
    case SplitRefusal::kNoOutput: return "passed newcomm NULL";
    case SplitRefusal::kBadColor:
      return str("passed color ", record.color, " (a color is >= 0, or HOOP_SPLIT_NOCOLOR)");
    case SplitRefusal::kBadConfig: return "passed a config it could not use (its error names it)";
    case SplitRefusal::kNone: break;
  }
  return str("refused, for reason ", record.refusal);
}

}  // namespace

SplitPlan planSplit(Communicator& parent, const SplitRequest& request) {
  const int ranks = parent.size();
  Record mine;
  mine.color = request.color;
  mine.key = request.key;
  mine.refusal = static_cast<int32_t>(request.refusal);
  std::vector<Record> records(static_cast<size_t>(ranks));
  gather(parent, &mine, records.data(), sizeof(Record));

  SplitPlan plan;
  // Groups by color, each with its members in parent order.
  std::map<int32_t, std::vector<int>> groups;
  for (int r = 0; r < ranks; ++r) {
    const Record& record = records[static_cast<size_t>(r)];
    if (record.tag != kSplitTag) {
      fail(hoopInvalidUsage, "hoopCommSplit: rank ", parent.rank(), ": ", parent.describePeer(r),
           " made another call (an allgather of ", sizeof(Record),
           " bytes) where this rank called hoopCommSplit");
    }
    if (record.refusal != 0) {
      plan.refusals +=
          str(plan.refusals.empty() ? "" : "; ", parent.describePeer(r), " ", refusalText(record));
    } else if (record.color != kNoColor) {
      groups[record.color].push_back(r);
    }
  }
  // Every rank read the same records: all of them stop here, or none does.
  if (!plan.refusals.empty()) return plan;

  // The first member of each group makes the group's id; the second allgather hands it round.
  std::array<char, HOOP_UNIQUE_ID_BYTES> ownId{};
  const auto group = groups.find(request.color);
  plan.member = group != groups.end();
  if (plan.member && group->second.front() == parent.rank()) {
    BootstrapId id;
    id.secret = Secret::random();
    const Secret tag = Secret::random();
    std::memcpy(&id.jobTag, tag.bytes.data(), sizeof(id.jobTag));
    // The address the parent's peers already reach this rank at.
    SocketAddress address = parent.peer(parent.rank()).listenAddress;
    address.setPort(0);
    plan.root = std::make_unique<RootService>(address, id, request.rendezvousTimeout);
    id.root = plan.root->address();
    const hoopUniqueId encoded = id.encode();
    std::memcpy(ownId.data(), encoded.internal, ownId.size());
  }
  if (groups.empty()) return plan;  // every rank passed HOOP_SPLIT_NOCOLOR
  std::vector<char> ids(ownId.size() * static_cast<size_t>(ranks));
  gather(parent, ownId.data(), ids.data(), ownId.size());
  if (!plan.member) return plan;

  std::vector<int>& members = group->second;
  // By key, then parent rank (the members are in parent order already, and the sort is stable).
  std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
    return records[static_cast<size_t>(a)].key < records[static_cast<size_t>(b)].key;
  });
  const int first = *std::min_element(members.begin(), members.end());
  hoopUniqueId encoded{};
  std::memcpy(encoded.internal, ids.data() + static_cast<size_t>(first) * ownId.size(),
              ownId.size());
  plan.id = BootstrapId::decode(encoded);
  plan.size = static_cast<int>(members.size());
  plan.rank =
      static_cast<int>(std::find(members.begin(), members.end(), parent.rank()) - members.begin());
  plan.parentRanks = members;
  log(LogLevel::kInfo, LogSubsys::kInit, parent.rank(), "hoopCommSplit: color ", request.color,
      ", key ", request.key, ": rank ", plan.rank, " of ", plan.size,
      " in the new communicator, whose rendezvous parent rank ", first, " serves");
  return plan;
}

}  // namespace hoop
