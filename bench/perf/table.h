// The result table, character for character in nccl-tests' layout, so scripts that read
// nccl-tests output read hoop-perf's too; one column more at the end of each row names the
// schedule that ran it, where nccl-tests' rows end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hoop::perf {

// The three '#' lines naming the columns, each ending in '\n'.
std::string tableColumnHeader();

// The columns every row starts with: size (B), count (elements), type, redop, root.
std::string rowPrefix(size_t bytes, size_t count, std::string_view type, std::string_view redop,
                      int root);

// Microseconds with fewer decimals as they grow (nccl-tests: 2 below 100, 1 below 10000, then 0).
std::string formatTimeUs(double us);

// One placement's columns (out-of-place or in-place): time, algbw, busbw, #wrong; #wrong is
// "N/A" when results were not checked.
std::string placementColumns(double timeUs, double algBwGBs, double busBwGBs,
                             std::optional<uint64_t> wrong);

// The last column: the schedule hoop ran for the row (HOOP_ALGO's name).
std::string scheduleColumn(std::string_view schedule);

// GB/s (10^9 bytes per second, as nccl-tests) for bytes moved in timeUs; 0 when timeUs is 0.
double bandwidthGBs(size_t bytes, double timeUs);

// The closing lines: out-of-bounds count with OK/FAILED, the mean busbw over every
// row and placement, and an empty '#' line.
std::string tableFooter(uint64_t wrongTotal, double avgBusBwGBs);

}  // namespace hoop::perf
