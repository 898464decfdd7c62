// hoop-perf's --json output: one document per run, the run's description and one record per
// table row (README.md documents every field).
#pragma once

#include <string>
#include <vector>

#include "results.h"
#include "run_header.h"

namespace hoop::perf {

// Bumped when a field changes meaning or goes away; adding fields keeps it.
inline constexpr int kJsonFormatVersion = 1;

std::string formatJsonReport(const RunDescription& run, const std::vector<TableSummary>& tables,
                             const std::vector<RowResult>& rows);

}  // namespace hoop::perf
