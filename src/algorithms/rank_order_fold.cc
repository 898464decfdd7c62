#include "algorithms/rank_order_fold.h"

#include "device/executor.h"

namespace hoop {

void foldInRankOrder(const CollectiveArgs& args, size_t n, FunctionRef<const void*(size_t)> input) {
  Executor& executor = executorOf(args);
  void* out = args.recv;
  if (n == 2) {
    executor.reduceFinal(out, input(0), input(1), args.count, args.type, args.op, n);
    return;
  }
  executor.reduce(out, input(0), input(1), args.count, args.type, args.op);
  for (size_t r = 2; r + 1 < n; ++r) {
    executor.reduce(out, out, input(r), args.count, args.type, args.op);
  }
  executor.reduceFinal(out, out, input(n - 1), args.count, args.type, args.op, n);
}

}  // namespace hoop
