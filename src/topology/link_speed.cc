#include "topology/link_speed.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace hoop {
namespace {

std::string firstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

uint64_t networkLinkSpeedMbps(const std::string& interface, const std::string& sysRoot) {
  // Reading fails with EINVAL for interfaces without a link speed (down, virtual); the file then
  // reads as empty. A down link may also report -1.
  std::string text = firstLine(std::filesystem::path(sysRoot) / "class/net" / interface / "speed");
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || value <= 0) return 0;
  return static_cast<uint64_t>(value);
}

uint64_t parseRdmaRateMbps(const std::string& rate) {
  char* end = nullptr;
  double gbits = std::strtod(rate.c_str(), &end);
  if (end == rate.c_str() || gbits <= 0 || std::string_view(end).rfind(" Gb/sec", 0) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(gbits * 1000.0 + 0.5);
}

uint64_t rdmaLinkSpeedMbps(const std::string& device, const std::string& sysRoot) {
  std::error_code error;
  std::filesystem::directory_iterator ports(
      std::filesystem::path(sysRoot) / "class/infiniband" / device / "ports", error);
  uint64_t fastest = 0;
  // The error_code overloads: a missing directory or a port that vanishes mid-walk is "unknown",
  // never an exception out of discovery.
  for (auto end = std::filesystem::directory_iterator(); !error && ports != end;
       ports.increment(error)) {
    fastest = std::max(fastest, parseRdmaRateMbps(firstLine(ports->path() / "rate")));
  }
  return fastest;
}

}  // namespace hoop
