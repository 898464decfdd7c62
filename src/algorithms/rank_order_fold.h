// The fold that schedules which gather every rank's input use to combine them: the same
// expression, in rank order, on every rank, so results are bitwise identical everywhere.
#pragma once

#include <cstddef>

#include "algorithms/collective.h"
#include "base/function_ref.h"

namespace hoop {

// Whether `rank` must copy its own input aside before foldInRankOrder writes recv: in place, the
// fold's first step (inputs 0 and 1) writes recv before ranks from 2 on read theirs.
inline bool foldOverwritesOwnInput(const CollectiveArgs& args, int rank) {
  return args.send == args.recv && rank >= 2;
}

// args.recv = ((input(0) op input(1)) op input(2)) ... op input(n-1), an average divided once at
// the end. input(0) or input(1) may be args.recv itself.
void foldInRankOrder(const CollectiveArgs& args, size_t n, FunctionRef<const void*(size_t)> input);

}  // namespace hoop
