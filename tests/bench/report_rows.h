// Made-up rows for the tests of the result files, with values that are exact in binary so the
// expected text needs no rounding.
#pragma once

#include <string>

#include "results.h"

namespace hoop::perf::testing {

inline PlacementResult placement(double timeUs, double busBw, std::optional<uint64_t> wrong) {
  PlacementResult p;
  p.timeUs = timeUs;
  p.algBwGBs = busBw / 2;
  p.busBwGBs = busBw;
  p.wrong = wrong;
  p.latency = {timeUs - 0.5, timeUs + 4, timeUs - 1, timeUs + 8};
  return p;
}

inline RowResult row(std::string algorithm, size_t bytes, double busBw) {
  RowResult r;
  r.collective = Collective::kAllReduce;
  r.algorithm = std::move(algorithm);
  r.transport = "tcp";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.type = "float";
  r.redop = "sum";
  r.root = -1;
  r.outOfPlace = placement(10.5, busBw, 0);
  r.inPlace = placement(12.25, busBw / 2, 0);
  return r;
}

}  // namespace hoop::perf::testing
