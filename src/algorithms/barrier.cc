// Dissemination barrier: in round k every rank signals rank + 2^k and waits for rank - 2^k.
// After ceil(log2 n) rounds every rank has heard, directly or not, from every other, for any n.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"
#include "base/error.h"

namespace hoop {

void runBarrier(Team& comm) {
  const int n = comm.size();
  const int self = comm.rank();
  const uint32_t seq = comm.nextCollectiveSeq();
  comm.beginOperation(OpKind::kBarrier, seq);
  Primitives prims(comm, {OpKind::kBarrier, seq}, DataType::kInt8, RedOp::kSum, 0);
  for (int distance = 1; distance < n; distance *= 2) {
    int to = (self + distance) % n;
    int from = (self - distance % n + n) % n;
    comm.connectAll({to, from});
    prims.send(to, nullptr, 0);
    prims.recv(from, nullptr, 0);
  }
  prims.finish();
}

}  // namespace hoop
