// HangReportScanner: finds the hang report hoop prints when an operation times out (a line
// holding "hoop hang report", then its lines indented by two spaces) in one rank's output, so
// hooprun can repeat it once at the end of a failed job instead of leaving it among every rank's
// lines.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hoop::run {

class HangReportScanner {
 public:
  // A report longer than this is cut: hoop's own are at most 24 lines.
  static constexpr size_t kMaxLines = 32;

  // Takes bytes as the rank wrote them (any split); keeps the first report seen.
  void feed(std::string_view bytes);
  // The report's lines, starting at "hoop hang report"; empty when none was seen.
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  void line(std::string_view text);

  std::string partial_;
  std::vector<std::string> lines_;
  bool capturing_ = false;
  bool complete_ = false;
};

}  // namespace hoop::run
