#include "table.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace hoop::perf {
namespace {

// printf into a std::string; the table is a few hundred short lines, so simplicity wins.
[[gnu::format(printf, 1, 2)]] std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string text(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  std::vsnprintf(text.data(), text.size() + 1, fmt, args);
  va_end(args);
  return text;
}

}  // namespace

// The widths are nccl-tests' (common.cu): "%12s  %12s  %8s  %6s  %6s" for the row prefix, then
// "  %7s  %6s  %6s  %5s" per placement, with the header's '#' eating the first column's padding.
std::string tableColumnHeader() {
  std::string text = format("# %10s  %12s  %8s  %6s  %6s", "", "", "", "", "");
  text += "           out-of-place                       in-place          \n";
  text += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s  %s\n", "size",
                 "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
                 "algbw", "busbw", "#wrong", "schedule");
  text += format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                 "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                 "(GB/s)", "");
  return text;
}

std::string rowPrefix(size_t bytes, size_t count, std::string_view type, std::string_view redop,
                      int root) {
  return format("%12zu  %12zu  %8.*s  %6.*s  %6d", bytes, count, static_cast<int>(type.size()),
                type.data(), static_cast<int>(redop.size()), redop.data(), root);
}

std::string formatTimeUs(double us) {
  if (us >= 10000.0) return format("%7.0f", us);
  if (us >= 100.0) return format("%7.1f", us);
  return format("%7.2f", us);
}

std::string placementColumns(double timeUs, double algBwGBs, double busBwGBs,
                             std::optional<uint64_t> wrong) {
  std::string text =
      format("  %7s  %6.2f  %6.2f", formatTimeUs(timeUs).c_str(), algBwGBs, busBwGBs);
  if (wrong) return text + format("  %5" PRIu64, *wrong);
  return text + format("  %5s", "N/A");
}

std::string scheduleColumn(std::string_view schedule) {
  return format("  %.*s", static_cast<int>(schedule.size()), schedule.data());
}

double bandwidthGBs(size_t bytes, double timeUs) {
  if (timeUs <= 0.0) return 0.0;
  return static_cast<double>(bytes) / 1.0e9 / (timeUs / 1.0e6);
}

std::string tableFooter(uint64_t wrongTotal, double avgBusBwGBs) {
  return format("# Out of bounds values : %" PRIu64 " %s\n", wrongTotal,
                wrongTotal != 0 ? "FAILED" : "OK") +
         format("# Avg bus bandwidth    : %g \n", avgBusBwGBs) + "#\n";
}

}  // namespace hoop::perf
