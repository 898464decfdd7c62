#include "text_format.h"

#include <algorithm>
#include <cstdio>

namespace hoop {
namespace {

// Up to two decimals, trailing zeros dropped: 1.25, 2.5, 256.
std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  std::string result = text;
  while (result.back() == '0') result.pop_back();
  if (result.back() == '.') result.pop_back();
  return result;
}

}  // namespace

std::string formatBytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return shortNumber(value) + " " + kUnits[unit];
}

std::string formatSpeed(uint64_t mbps) {
  if (mbps == 0) return "speed unknown";
  if (mbps < 1000) return std::to_string(mbps) + " Mb/s";
  return shortNumber(static_cast<double>(mbps) / 1000.0) + " Gb/s";
}

std::string formatIndexList(std::vector<unsigned> indices) {
  std::sort(indices.begin(), indices.end());
  std::string text;
  for (size_t i = 0; i < indices.size();) {
    size_t last = i;
    while (last + 1 < indices.size() && indices[last + 1] == indices[last] + 1) ++last;
    if (!text.empty()) text += ',';
    text += std::to_string(indices[i]);
    if (last > i) text += "-" + std::to_string(indices[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace hoop
