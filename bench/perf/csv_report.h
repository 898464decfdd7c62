// hoop-perf's --csv output: one header line, then one line per table row with both placements,
// the same records as the JSON's "rows" (README.md lists the columns).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "results.h"

namespace hoop::perf {

// One field as RFC 4180 writes it: quoted, with quotes doubled, when it holds a comma, a quote or
// a line break; as it is otherwise.
std::string csvField(std::string_view text);

// The column names, comma separated, ending in '\n'.
std::string csvHeader();

// One record in the header's column order, ending in '\n'. An unchecked #wrong (-c 0) is empty.
std::string csvRow(const RowResult& row);

// The header and every row.
std::string formatCsvReport(const std::vector<RowResult>& rows);

}  // namespace hoop::perf
