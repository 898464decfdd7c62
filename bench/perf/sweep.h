// One table of the run: every type, op and size on one communicator, out-of-place and in-place,
// printed row by row on rank 0 and kept as records for the result files.
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <optional>
#include <span>
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
  // The --algo entry this table runs: a schedule's name, or "auto" (kOwnChoice) for hoop's own
  // choice; nullopt without --algo. It names the table in the records and, where the collective
  // has schedules to choose from, sets the communicator's rules before each of the table's turns
  // (the name, "" for "auto"); without --algo HOOP_ALGO applies as the environment has it.
  std::optional<std::string> table;
  // --memory device: the stream every call is enqueued on, and host buffers as large as the
  // device ones (`buffers`), where the check writes its inputs and reads the results before and
  // after copying them. Null stream: host memory, and the check works on `buffers` directly.
  hoopStream_t stream = nullptr;
  BufferPair staging;
};

struct SweepResult {
  std::vector<RowResult> rows;
  TableSummary summary;
};

// Sets the bench's rules, then prints the rows and the footer (not the column header) on rank 0;
// every rank returns the same records.
SweepResult runSweep(const Bench& bench);

// --interleave's turns: the table that runs k-th in row `row` of `tables`. Each row opens with the
// next table, so that no table always takes a new size's first calls on the machine.
inline size_t tableInTurn(size_t row, size_t k, size_t tables) { return (row + k) % tables; }

// --interleave: every bench's sweep, row by row, each row timed on every bench in turn before the
// next row; prints nothing (printSweep, after). The benches share the run's communicator, buffers
// and options; each turn first sets its bench's rules.
std::vector<SweepResult> runInterleavedSweeps(std::span<const Bench> benches);

// A sweep's rows and footer as runSweep prints them, on rank 0.
void printSweep(int rank, const SweepResult& sweep);

}  // namespace hoop::perf
