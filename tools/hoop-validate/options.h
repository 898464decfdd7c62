// hoop-validate's command line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace hoop::validate {

enum class Mode { kQuick, kDefault, kBurnIn };

struct Options {
  bool help = false;
  Mode mode = Mode::kDefault;
  double burnInSeconds = 0;    // --burn-in: how long to keep repeating the plans
  bool full = false;           // --full: every pair of hosts, not R random rounds
  int rounds = -1;             // --rounds R: cross-host rounds (-1: the mode's)
  int repeats = -1;            // --repeats K: measurements of each pair (-1: the mode's)
  size_t messageBytes = 0;     // --bytes: each bandwidth message (0: the mode's)
  int messages = 4;            // per bandwidth timing
  uint64_t seed = 1;           // --seed: the random matchings and the data pattern
  double slowFraction = 0.5;   // --slow F: below F x the reference is slow
  double timeoutSeconds = 20;  // --timeout: HOOP_TIMEOUT when the environment has none
  bool collectives = true;     // --no-collectives leaves the whole-job allreduce out
  std::string expectFile;      // --expect FILE
  std::string outDir = ".";    // --out DIR: report.json, measurements.jsonl, heatmap-*.svg
};

// A command line hoop-validate cannot run: exit status 3 (0, 1 and 2 are verdicts).
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses the arguments after the program name and fills in the mode's defaults.
Options parseOptions(const std::vector<std::string>& args);

// "90s", "15m", "2h" or plain seconds.
double parseDuration(const std::string& text);

extern const char* const kUsage;

}  // namespace hoop::validate
