// What a run measured, as plain values: one record per table row, and one summary per table.
// The table prints as it goes; the JSON, CSV and plot outputs are written from these at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective.h"

namespace hoop::perf {

// Per-iteration latency over a row's timed batch, after the ranks' times are combined per
// iteration as -a says. Every field is 0 for an empty batch.
struct LatencyStats {
  double medianUs = 0.0;  // the middle time; the mean of the two middle ones for an even count
  double p99Us = 0.0;     // nearest rank: the ceil(0.99 * n)-th smallest time
  double minUs = 0.0;
  double maxUs = 0.0;
};

// Takes the times by value: it sorts them.
LatencyStats latencyStats(std::vector<double> iterationUs);

// One placement of one row (out-of-place or in-place).
struct PlacementResult {
  double timeUs = 0.0;  // the table's time: the batch's time per iteration, combined as -a says
  double algBwGBs = 0.0;
  double busBwGBs = 0.0;
  std::optional<uint64_t> wrong;  // summed over ranks; nullopt with -c 0
  LatencyStats latency;
};

struct RowResult {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;  // the schedule hoop ran for this row (algorithm.h's names)
  std::string transport;
  std::string memory = "host";  // memoryName(): where the buffers lived
  size_t bytes = 0;             // the table's size column
  size_t count = 0;             // the table's count column
  std::string type;
  std::string redop;  // "none" for collectives that only move data
  int root = -1;      // -1 for collectives without a root
  PlacementResult outOfPlace;
  PlacementResult inPlace;
};

// One table's footer numbers.
struct TableSummary {
  std::string algorithm;  // the schedule --algo forced, or "auto" for hoop's own choice
  size_t rows = 0;
  uint64_t wrongTotal = 0;
  double avgBusBwGBs = 0.0;
};

}  // namespace hoop::perf
