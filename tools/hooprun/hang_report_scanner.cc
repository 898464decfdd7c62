#include "hooprun/hang_report_scanner.h"

namespace hoop::run {
namespace {

constexpr std::string_view kTitle = "hoop hang report";
// Longer lines are not hoop's; keeping them would let a rank make hooprun buffer without bound.
constexpr size_t kMaxLineBytes = 1024;

}  // namespace

void HangReportScanner::feed(std::string_view bytes) {
  if (complete_) return;
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    if (newline == std::string_view::npos) {
      if (partial_.size() + bytes.size() <= kMaxLineBytes) partial_.append(bytes);
      return;
    }
    if (partial_.size() + newline <= kMaxLineBytes) partial_.append(bytes.substr(0, newline));
    line(partial_);
    partial_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void HangReportScanner::line(std::string_view text) {
  if (complete_) return;
  if (!capturing_) {
    size_t title = text.find(kTitle);
    if (title == std::string_view::npos) return;
    capturing_ = true;
    lines_.emplace_back(text.substr(title));
    return;
  }
  if (text.substr(0, 2) != "  " || lines_.size() >= kMaxLines) {
    complete_ = true;
    return;
  }
  lines_.emplace_back(text);
}

}  // namespace hoop::run
