// Result files (--json, --csv, --plot), written whole or not at all: the text goes to FILE.tmp,
// which is renamed over FILE only once it is complete and on disk, so a run that fails or is
// killed never leaves a half-written FILE for a script to read.
#pragma once

#include <string>
#include <string_view>

namespace hoop::perf {

// "" when path looks writable: not a directory, and its directory exists and may be written.
// Checked before the sweep, so a typo costs seconds, not a whole run. Otherwise one line naming
// path and what is wrong.
std::string checkOutputPath(const std::string& path);

// Writes content to path + ".tmp", flushes it to disk and renames it to path. Returns "" on
// success, or one line saying what failed (then neither file is left behind).
std::string writeFileAtomically(const std::string& path, std::string_view content);

}  // namespace hoop::perf
