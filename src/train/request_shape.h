// What every rank must agree on before a named request runs: its kind, element type, count,
// operation, root and scale factors. Two ranks that submit one name with different shapes get an
// error instead of a hang or a wrong result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hoop/hoop.h"

namespace hoop::train {

enum class RequestKind : uint8_t {
  kAllReduce = 0,
  kBroadcast = 1,
  kAllGather = 2,
  kAllToAll = 3,
  kReduceScatter = 4,
  kBarrier = 5,
  kAllToAllv = 6,  // uneven all-to-all: per-destination counts, received counts exchanged first
};
constexpr uint8_t kRequestKindCount = 7;

struct RequestShape {
  RequestKind kind = RequestKind::kBarrier;
  hoopDataType_t type = hoopUint8;
  hoopRedOp_t op = hoopSum;
  int root = 0;
  // allreduce and broadcast: elements; allgather: this rank's elements (may differ between ranks);
  // alltoall: elements per destination rank; reduce-scatter: elements each rank receives;
  // uneven alltoall: this rank's elements to send in all (may differ between ranks).
  size_t count = 0;
  double prescale = 1.0;
  double postscale = 1.0;

  bool operator==(const RequestShape&) const = default;
};

const char* kindName(RequestKind kind);
// Whether a value from a caller or the wire names a type or operation the core knows.
bool knownType(hoopDataType_t type);
bool knownOp(hoopRedOp_t op);
std::string_view typeName(hoopDataType_t type);
std::string_view opName(hoopRedOp_t op);
size_t elementSize(hoopDataType_t type);
bool isFloatingPoint(hoopDataType_t type);

// "allreduce float[1000] avg", "broadcast int32[4] root 1", with scale factors when not 1.
std::string describe(const RequestShape& shape);

// Kinds whose count is each rank's own (allgather, uneven alltoall): ranks agree on the type
// only, and the response cache does not keep them.
bool countIsPerRank(RequestKind kind);

// Ranks agree on every field, except the count where countIsPerRank.
bool sameRequest(const RequestShape& a, const RequestShape& b);

// Elements a rank's input buffer holds (for scratch buffers of ranks that joined).
size_t inputElements(const RequestShape& shape, int nranks);
size_t outputElements(const RequestShape& shape, int nranks);

}  // namespace hoop::train
