// Rabenseifner allreduce: a reduce-scatter by recursive halving, then an allgather by recursive
// doubling. The buffer is cut into p blocks, one per survivor. In each halving round a rank
// keeps the half of its current range that holds its own block, sends the other half to the
// partner that keeps it, and combines what the partner sends for its kept half; after log2(p)
// rounds index i holds block i fully reduced. The allgather runs the rounds backwards, each
// rank trading everything it holds so far. Every rank sends 2(p-1)/p of the buffer, as the
// ring does, but in 2 log2(p) steps instead of 2(n-1): it wins over the ring at mid sizes, where
// the ring's step count still costs, and over recursive doubling once buffers are big enough
// that moving the whole buffer every round does. Rank counts that are not a power of two fold
// first (power_of_two_fold.h).
//
// Each block is reduced in one place, by the rank that ends up owning it, with partners always
// combined lower rank first; every rank then copies that one result, so results are bitwise
// identical on all ranks.
#include <cstring>

#include "algorithms/collective.h"
#include "algorithms/power_of_two_fold.h"

namespace hoop {
namespace {

// The survivors' blocks: p nearly equal ranges of the buffer; a group of `width` blocks starts at
// a multiple of `width`.
struct Blocks {
  EvenSplit split;
  size_t elementSize;
  char* base;

  // The group of `width` blocks that holds block `index`.
  size_t first(size_t index, size_t width) const { return index / width * width; }
  char* at(size_t index, size_t width) const {
    return base + split.offset(first(index, width)) * elementSize;
  }
  size_t count(size_t index, size_t width) const {
    const size_t begin = first(index, width);
    return split.offset(begin + width) - split.offset(begin);
  }
};

// Piece k of a range of `count` elements at `base`, in pieces of `pieceElements`; empty (at the
// range's end) past it.
struct Piece {
  char* data;
  size_t count;
};
Piece pieceOf(char* base, size_t count, size_t k, size_t pieceElements, size_t elementSize) {
  const size_t begin = std::min(count, k * pieceElements);
  return {base + begin * elementSize, std::min(pieceElements, count - begin)};
}

// Enough pieces for the longer of two ranges, and at least one, so both partners of a round loop
// the same number of times (each sees the other's ranges swapped) even when a range is empty.
size_t piecesFor(size_t countA, size_t countB, size_t pieceElements) {
  const size_t longer = std::max(countA, countB);
  return std::max<size_t>(1, (longer + pieceElements - 1) / pieceElements);
}

}  // namespace

void rabenseifnerAllReduce(Communicator& comm, const CollectiveArgs& args) {
  const size_t n = static_cast<size_t>(comm.size());
  const size_t elementSize = dataTypeSize(args.type);
  auto* result = static_cast<char*>(args.recv);
  if (n == 1) {
    finishAverage(result, args.send, args.count, args.type, args.op, 1);
    return;
  }
  // Count 0 may come with NULL buffers, and memcpy on NULL is undefined even for 0 bytes.
  if (args.send != args.recv && args.bytes() > 0) std::memcpy(result, args.send, args.bytes());
  const size_t pieceElements = pieceElementsFor(comm, args);
  Primitives prims(comm, args.tag(), args.type, args.op, pieceElements * elementSize);
  const PowerOfTwoFold fold(comm.rank(), comm.size());

  fold.foldIn(prims, result, args.count, elementSize, pieceElements);
  if (!fold.sitsOut()) {
    const size_t p = fold.survivors();
    const size_t self = fold.index();
    const Blocks blocks{EvenSplit{args.count, p}, elementSize, result};

    // Recursive halving: keep the half with our block, give the partner the other half.
    for (size_t width = p / 2; width >= 1; width /= 2) {
      const size_t partner = self ^ width;
      char* keep = blocks.at(self, width);
      char* give = blocks.at(partner, width);
      const size_t keepCount = blocks.count(self, width);
      const size_t giveCount = blocks.count(partner, width);
      const size_t pieces = piecesFor(keepCount, giveCount, pieceElements);
      for (size_t k = 0; k < pieces; ++k) {
        const Piece out = pieceOf(give, giveCount, k, pieceElements, elementSize);
        const Piece in = pieceOf(keep, keepCount, k, pieceElements, elementSize);
        prims.exchangeCombine(fold.rankOf(partner), out.data, out.count, in.data, in.count);
      }
    }
    finishAverage(blocks.at(self, 1), blocks.at(self, 1), blocks.count(self, 1), args.type, args.op,
                  n);

    // Recursive doubling: trade everything held so far; the held range doubles every round.
    for (size_t width = 1; width < p; width *= 2) {
      const size_t partner = self ^ width;
      const int peer = fold.rankOf(partner);
      char* mine = blocks.at(self, width);
      char* theirs = blocks.at(partner, width);
      const size_t mineCount = blocks.count(self, width);
      const size_t theirCount = blocks.count(partner, width);
      const size_t pieces = piecesFor(mineCount, theirCount, pieceElements);
      for (size_t k = 0; k < pieces; ++k) {
        const Piece out = pieceOf(mine, mineCount, k, pieceElements, elementSize);
        const Piece in = pieceOf(theirs, theirCount, k, pieceElements, elementSize);
        prims.sendRecv(peer, out.data, out.count * elementSize, peer, in.data,
                       in.count * elementSize);
      }
    }
  }
  fold.foldOut(prims, result, args.count, elementSize, pieceElements);
  prims.finish();
}

}  // namespace hoop
