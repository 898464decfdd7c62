// The fold that lets schedules built for a power-of-two number of ranks (recursive doubling,
// recursive halving) run on any rank count. With p the largest power of two <= n and r = n - p,
// ranks 0 .. 2r-1 pair up as (2i, 2i+1): before the schedule the odd rank of each pair hands its
// data to the even one and sits out; the p survivors run the power-of-two schedule as indices
// 0 .. p-1; afterwards each even rank hands the result back to its odd partner. The price is two
// extra steps on the paired ranks, which is why it is used only when n is not a power of two.
//
// Survivor indices keep rank order (index a < index b exactly when rank a < rank b), so "lower
// index first" and "lower rank first" name the same operand order.
#pragma once

#include <cstddef>

#include "algorithms/primitives.h"
#include "base/function_ref.h"

namespace hoop {

class PowerOfTwoFold {
 public:
  PowerOfTwoFold(int rank, int ranks);

  size_t survivors() const { return survivors_; }
  // This rank gave its data to its partner and waits for the result.
  bool sitsOut() const { return paired_ && rank_ % 2 == 1; }
  // This rank's index among the survivors (only when !sitsOut()).
  size_t index() const { return index_; }
  // The rank that plays survivor `index`.
  int rankOf(size_t index) const;

  // Odd paired ranks send `count` elements of `data`, piece by piece; their even partners
  // combine them into their own `data`. Other ranks do nothing.
  void foldIn(Primitives& prims, char* data, size_t count, size_t elementSize,
              size_t pieceElements) const;
  // Even paired ranks send the finished `data`; their odd partners receive it.
  void foldOut(Primitives& prims, char* data, size_t count, size_t elementSize,
               size_t pieceElements) const;

 private:
  int rank_;
  size_t survivors_ = 1;
  size_t extra_ = 0;  // r: how many pairs fold
  bool paired_ = false;
  size_t index_ = 0;
};

// What a power-of-two allreduce schedule does on the survivors, in place in `result` (the
// whole buffer), in pieces of `pieceElements`.
struct FoldedRound {
  Primitives& prims;
  const PowerOfTwoFold& fold;
  char* result;
  size_t pieceElements;
};

// Runs such a schedule on any rank count: the input copied to the output, the extra ranks
// folded in, `survivorsRun` on the survivors, the result handed back to the folded ranks.
void foldedAllReduce(Team& comm, const CollectiveArgs& args,
                     FunctionRef<void(const FoldedRound&)> survivorsRun);

}  // namespace hoop
