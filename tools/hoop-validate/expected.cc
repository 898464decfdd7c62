// Reading the operator's expected figures (expected.h).
#include "expected.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace hoop::validate {

ExpectedFigures readExpectedFigures(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(hoopInvalidArgument, "--expect ", path, ": cannot open the file");
  ExpectedFigures figures;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string transport;
    std::string metric;
    double value = 0;
    if (!(words >> transport)) continue;
    std::string rest;
    if (!(words >> metric >> value) || (words >> rest) || value <= 0 ||
        (metric != "bandwidth" && metric != "latency")) {
      fail(hoopInvalidArgument, "--expect ", path, ":", number,
           ": want 'TRANSPORT bandwidth GB/S' or 'TRANSPORT latency MICROSECONDS', not '", line,
           "'");
    }
    (metric == "bandwidth" ? figures.bandwidthGBps : figures.latencyUs)[transport] = value;
  }
  return figures;
}

double nicCeilingGBps(double gbpsA, double gbpsB, int sharing) {
  if (gbpsA <= 0 || gbpsB <= 0) return 0;
  return std::min(gbpsA, gbpsB) / 8 / std::max(1, sharing);
}

}  // namespace hoop::validate
