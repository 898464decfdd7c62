// One round of the plan on every rank at once: each rank probes the link to its partner (if it
// has one) with the library's probeLink, then every rank's record is gathered to every rank, so
// rank 0 can analyse the whole job. A probe or gather that fails throws hoop::Error: the
// communicator is then failed and the run ends with what was gathered before.
#pragma once

#include <string>
#include <vector>

#include "algorithms/link_probe.h"
#include "hoop/hoop.h"
#include "plan.h"

namespace hoop::validate {

struct Measurement {
  int pass = 0;
  bool confirmation = false;  // a re-measurement of a pair that read slow (plan.h)
  Phase phase = Phase::kIntraHost;
  int round = 0;
  int a = -1;  // the lower rank of the pair
  int b = -1;
  std::string transport;
  LinkProbe figures;  // as rank a returned them (self a, peer b)
  PatternCheck atA;   // the data a received from b
  PatternCheck atB;   // the data b received from a
};

// Runs `round`, gathering the results of all its pairs.
std::vector<Measurement> runRound(hoopComm_t comm, const Round& round,
                                  const LinkProbeOptions& options, int pass);

// What each rank knows about itself that the others need: its NIC and the NIC's speed.
struct RankNic {
  std::string name;  // "" when no interface holds the rank's address
  double gbps = 0;   // link speed in Gb/s; 0 when unknown
};
std::vector<RankNic> gatherNics(hoopComm_t comm);

// Throws hoop::Error with comm's last error when `result` is not hoopSuccess.
void check(hoopComm_t comm, hoopResult_t result, const char* what);

}  // namespace hoop::validate
