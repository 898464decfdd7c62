#include "algorithms/rank_order_fold.h"

#include "device/cpu/reduce.h"

namespace hoop {

void foldInRankOrder(const CollectiveArgs& args, size_t n, FunctionRef<const void*(size_t)> input) {
  void* out = args.recv;
  if (n == 2) {
    reduceFinal(out, input(0), input(1), args.count, args.type, args.op, n);
    return;
  }
  reduce(out, input(0), input(1), args.count, args.type, args.op);
  for (size_t r = 2; r + 1 < n; ++r) reduce(out, out, input(r), args.count, args.type, args.op);
  reduceFinal(out, out, input(n - 1), args.count, args.type, args.op, n);
}

}  // namespace hoop
