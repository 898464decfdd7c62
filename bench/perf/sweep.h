// One table of the run: every type, op and size on one communicator, out-of-place and in-place,
// printed row by row on rank 0 and kept as records for the result files.
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "buffers.h"
#include "options.h"
#include "results.h"

namespace hoop::perf {

// Prints rank 0's text at once, so a hang shows which row it is in.
void printOnRank0(int rank, const std::string& text);

// What every measurement of a table shares.
struct Bench {
  hoopComm_t comm = nullptr;
  const Options& options;
  BufferPair buffers;
  int rank = 0;
  int nranks = 1;
  bool corrupt = false;  // HOOP_PERF_CORRUPT=1, rank 0 only
  // The schedule this table's communicator was created with (--algo), or nullopt for hoop's own
  // choice; names the rows' schedule in the records.
  std::optional<std::string> forcedAlgorithm;
};

struct SweepResult {
  std::vector<RowResult> rows;
  TableSummary summary;
};

// Prints the rows and the footer (not the column header) on rank 0; every rank returns the same
// records.
SweepResult runSweep(const Bench& bench);

}  // namespace hoop::perf
