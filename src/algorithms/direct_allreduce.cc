// Direct allreduce for small buffers: every rank sends its whole input to every other rank, then
// folds all n inputs in rank order. One network step instead of the ring's 2(n-1), at the price
// of (n-1) times the bytes, which is what small messages can afford.
//
// Each rank evaluates the same expression (((x0 op x1) op x2) ...) on the same inputs, so
// results are bitwise identical everywhere.
#include "algorithms/collective.h"
#include "algorithms/primitives.h"
#include "algorithms/rank_order_fold.h"
#include "base/error.h"

namespace hoop {

void directAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t bytes = args.bytes();
  const int self = comm.rank();
  comm.connectEveryone();

  // inputs[r] receives rank r's contribution. Our own is read where it lies unless the fold
  // would write over it first; only then is it copied beside the others, a pass over the buffer
  // that the 2-rank exchange never pays.
  Primitives prims(comm, args, 0);
  const bool copyOwn = foldOverwritesOwnInput(args, self);
  char* inputs = prims.staging(n * bytes);
  if (copyOwn) prims.copy(inputs + static_cast<size_t>(self) * bytes, args.send, bytes);
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == self) continue;
    comm.connection(static_cast<int>(r)).postRecv(inputs + r * bytes, bytes, args.tag());
  }
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) != self) prims.send(static_cast<int>(r), args.send, bytes);
  }
  for (size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == self) continue;
    Connection& c = comm.connection(static_cast<int>(r));
    comm.waitUntil([&] { return c.recvsCompleted() == c.recvsPosted(); },
                   [&] { return str("data from ", comm.describePeer(static_cast<int>(r))); });
  }
  // Every send must have left before the fold may overwrite an in-place buffer.
  prims.finish();

  foldInRankOrder(args, n, [&](size_t r) -> const void* {
    return static_cast<int>(r) == self && !copyOwn ? args.send : inputs + r * bytes;
  });
}

}  // namespace hoop
