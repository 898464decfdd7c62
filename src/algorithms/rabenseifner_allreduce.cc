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

// One round with the partner at `width`: the group of blocks `outIndex` is in goes out and the
// group `inIndex` is in comes back, piece by piece; trade(peer, out, in) moves one pair.
template <typename Trade>
void tradeGroups(const FoldedRound& round, const Blocks& blocks, size_t elementSize, size_t width,
                 size_t outIndex, size_t inIndex, Trade trade) {
  const int peer = round.fold.rankOf(round.fold.index() ^ width);
  char* out = blocks.at(outIndex, width);
  char* in = blocks.at(inIndex, width);
  const size_t outCount = blocks.count(outIndex, width);
  const size_t inCount = blocks.count(inIndex, width);
  const size_t pieces = piecesFor(outCount, inCount, round.pieceElements);
  for (size_t k = 0; k < pieces; ++k) {
    trade(peer, pieceOf(out, outCount, k, round.pieceElements, elementSize),
          pieceOf(in, inCount, k, round.pieceElements, elementSize));
  }
}

// Recursive halving: keep the half with this rank's block, give the partner the other half.
void reduceScatterByHalving(const FoldedRound& round, const Blocks& blocks, size_t elementSize) {
  const size_t self = round.fold.index();
  for (size_t width = round.fold.survivors() / 2; width >= 1; width /= 2) {
    tradeGroups(round, blocks, elementSize, width, self ^ width, self,
                [&](int peer, const Piece& give, const Piece& keep) {
                  round.prims.exchangeCombine(peer, give.data, give.count, keep.data, keep.count);
                });
  }
}

// Recursive doubling: trade everything held so far; the held range doubles every round.
void allGatherByDoubling(const FoldedRound& round, const Blocks& blocks, size_t elementSize) {
  const size_t self = round.fold.index();
  for (size_t width = 1; width < round.fold.survivors(); width *= 2) {
    tradeGroups(round, blocks, elementSize, width, self, self ^ width,
                [&](int peer, const Piece& mine, const Piece& theirs) {
                  round.prims.sendRecv(peer, mine.data, mine.count * elementSize, peer, theirs.data,
                                       theirs.count * elementSize);
                });
  }
}

}  // namespace

void rabenseifnerAllReduce(Team& comm, const CollectiveArgs& args) {
  const size_t elementSize = dataTypeSize(args.type);
  foldedAllReduce(comm, args, [&](const FoldedRound& round) {
    const Blocks blocks{EvenSplit{args.count, round.fold.survivors()}, elementSize, round.result};
    reduceScatterByHalving(round, blocks, elementSize);
    const size_t self = round.fold.index();
    round.prims.finishAverage(blocks.at(self, 1), blocks.count(self, 1),
                              static_cast<size_t>(comm.size()));
    allGatherByDoubling(round, blocks, elementSize);
  });
}

}  // namespace hoop
