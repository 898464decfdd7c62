#include "algorithms/power_of_two_fold.h"

namespace hoop {

PowerOfTwoFold::PowerOfTwoFold(int rank, int ranks) : rank_(rank) {
  const size_t n = static_cast<size_t>(ranks);
  while (survivors_ * 2 <= n) survivors_ *= 2;
  extra_ = n - survivors_;
  const size_t self = static_cast<size_t>(rank);
  paired_ = self < 2 * extra_;
  index_ = paired_ ? self / 2 : self - extra_;
}

int PowerOfTwoFold::rankOf(size_t index) const {
  return static_cast<int>(index < extra_ ? 2 * index : index + extra_);
}

void PowerOfTwoFold::foldIn(Primitives& prims, char* data, size_t count, size_t elementSize,
                            size_t pieceElements) const {
  if (!paired_) return;
  // At least one (possibly empty) piece, so the pair stays in step on zero-count calls.
  for (size_t offset = 0; offset < count || offset == 0; offset += pieceElements) {
    const size_t piece = std::min(pieceElements, count - offset);
    if (sitsOut()) {
      prims.send(rank_ - 1, data + offset * elementSize, piece * elementSize);
    } else {
      prims.recvCombine(rank_ + 1, data + offset * elementSize, piece);
    }
    if (count == 0) break;
  }
}

void PowerOfTwoFold::foldOut(Primitives& prims, char* data, size_t count, size_t elementSize,
                             size_t pieceElements) const {
  if (!paired_) return;
  for (size_t offset = 0; offset < count || offset == 0; offset += pieceElements) {
    const size_t bytes = std::min(pieceElements, count - offset) * elementSize;
    if (sitsOut()) {
      prims.recv(rank_ - 1, data + offset * elementSize, bytes);
    } else {
      prims.send(rank_ + 1, data + offset * elementSize, bytes);
    }
    if (count == 0) break;
  }
}

void foldedAllReduce(Team& comm, const CollectiveArgs& args,
                     FunctionRef<void(const FoldedRound&)> survivorsRun) {
  const size_t elementSize = dataTypeSize(args.type);
  auto* result = static_cast<char*>(args.recv);
  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args, pieceElements * elementSize);
  prims.copy(result, args.send, args.bytes());
  const PowerOfTwoFold fold(comm.rank(), comm.size());

  fold.foldIn(prims, result, args.count, elementSize, pieceElements);
  if (!fold.sitsOut()) survivorsRun(FoldedRound{prims, fold, result, pieceElements});
  fold.foldOut(prims, result, args.count, elementSize, pieceElements);
  prims.finish();
}

}  // namespace hoop
