// hoop-validate: measures every link of a job with hoop's own send/recv, checks every byte moved,
// runs whole-job allreduces, and names the slow or failing link, host or rail (docs/validate.md).
// Launched like any hoop program; rank 0 writes the summary and the reports.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/c_api_submit.h"
#include "base/clock.h"
#include "base/error.h"
#include "bisection.h"
#include "collective_check.h"
#include "expected.h"
#include "measure.h"
#include "options.h"
#include "plan.h"
#include "report.h"

namespace hoop::validate {
namespace {

constexpr int kExitFailed = 2;
constexpr int kExitUsage = 3;
// How many times a pair that read slow is measured again.
constexpr int kConfirmations = 2;

// Each repeat of each round gets a pattern of its own (link_probe.h).
uint64_t patternSeed(uint64_t seed, int pass, const Round& round, int repeat) {
  return seed * 1000003 + static_cast<uint64_t>(pass) * 7919 +
         static_cast<uint64_t>(round.phase == Phase::kCrossHost) * 104729 +
         static_cast<uint64_t>(round.index) * 131 + static_cast<uint64_t>(repeat);
}

// Every pair with a slow cell in rank 0's analysis of `measurements`, on every rank.
std::vector<std::pair<int, int>> suspectPairs(hoopComm_t comm, int self, const Layout& layout,
                                              const std::vector<RankNic>& nics,
                                              const std::vector<Measurement>& measurements,
                                              const ExpectedFigures& expected,
                                              double slowFraction) {
  std::vector<int32_t> flat;
  if (self == 0) {
    const std::vector<CollectiveOutcome> none;
    const Analysis analysis = analyse(
        AnalysisInput{&layout, &nics, &measurements, &expected, &none, nullptr, slowFraction});
    for (const Cell* cell : analysis.outliers) {
      const int32_t a = std::min(cell->from, cell->to);
      const int32_t b = std::max(cell->from, cell->to);
      bool seen = false;
      for (size_t i = 0; i < flat.size(); i += 2) seen |= flat[i] == a && flat[i + 1] == b;
      if (!seen) flat.insert(flat.end(), {a, b});
    }
  }
  int32_t count = static_cast<int32_t>(flat.size());
  check(comm, hoopBroadcast(&count, &count, 1, hoopInt32, 0, comm, nullptr), "agreeing");
  flat.resize(static_cast<size_t>(count));
  if (count > 0) {
    check(comm, hoopBroadcast(flat.data(), flat.data(), flat.size(), hoopInt32, 0, comm, nullptr),
          "agreeing on the pairs to measure again");
  }
  std::vector<std::pair<int, int>> pairs;
  for (size_t i = 0; i < flat.size(); i += 2) pairs.emplace_back(flat[i], flat[i + 1]);
  return pairs;
}

// Each operation's time-out in seconds: HOOP_TIMEOUT as the job has it (run() sets it from
// --timeout when the environment has none).
double operationTimeoutSeconds(const Options& options) {
  const char* text = std::getenv("HOOP_TIMEOUT");
  char* end = nullptr;
  const double seconds = text == nullptr ? 0 : std::strtod(text, &end);
  return text != nullptr && end != text && seconds > 0 ? seconds : options.timeoutSeconds;
}

// Rank 0's decision, on every rank.
int agreed(hoopComm_t comm, int value) {
  check(comm, hoopBroadcast(&value, &value, 1, hoopInt32, 0, comm, nullptr), "agreeing");
  return value;
}

int run(const Options& options) {
  ExpectedFigures expected;
  // Every rank reads the file where it is given, so a missing one stops the job before it starts.
  if (!options.expectFile.empty()) expected = readExpectedFigures(options.expectFile);
  if (std::getenv("HOOP_TIMEOUT") == nullptr) {
    ::setenv("HOOP_TIMEOUT", std::to_string(options.timeoutSeconds).c_str(), 1);
  }
  hoopComm_t comm = nullptr;
  if (hoopCommInitFromEnv(&comm) != hoopSuccess) {
    std::cerr << "hoop-validate: cannot join the job: " << hoopGetLastError(nullptr) << '\n';
    return kExitFailed;
  }
  int self = 0;
  int size = 0;
  hoopCommUserRank(comm, &self);
  hoopCommCount(comm, &size);
  std::vector<std::string> hostNames;
  capi::runOn(comm, [&](Communicator& communicator) {
    for (int r = 0; r < size; ++r) hostNames.push_back(communicator.peerHostName(r));
  });
  const Layout layout = layoutFromHostNames(hostNames);

  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<RankNic> nics(static_cast<size_t>(size));
  std::vector<Measurement> measurements;
  std::vector<CollectiveOutcome> collectives;
  RunFailure failure;
  bool failed = false;
  int passes = 0;
  std::string where = "gathering the ranks' NICs";
  // Its tests may start up to a time-out apart on different ranks (each rank meets the job's
  // failure under its own time-out), so each waits twice that.
  const double timeout = operationTimeoutSeconds(options);
  std::unique_ptr<Bisection> bisection;
  try {
    nics = gatherNics(comm);
    where = "splitting the communicators of the bisection";
    bisection = std::make_unique<Bisection>(comm, layout, static_cast<int>(std::ceil(2 * timeout)));
    LinkProbeOptions probe;
    probe.messageBytes = options.messageBytes;
    probe.messages = options.messages;
    probe.latencyRoundTrips = options.mode == Mode::kQuick ? 16 : 32;
    for (int pass = 0;; ++pass) {
      std::vector<Round> rounds = intraHostRounds(layout);
      for (Round& round : crossHostRounds(layout, options.rounds, options.full,
                                          options.seed + static_cast<uint64_t>(pass))) {
        rounds.push_back(std::move(round));
      }
      for (const Round& round : rounds) {
        for (int repeat = 0; repeat < options.repeats; ++repeat) {
          where = str(phaseName(round.phase), " round ", round.index, " of pass ", pass);
          probe.patternSeed = patternSeed(options.seed, pass, round, repeat);
          for (Measurement& m : runRound(comm, round, probe, pass))
            measurements.push_back(std::move(m));
        }
      }
      passes = pass + 1;
      const bool again = options.mode == Mode::kBurnIn && elapsed() < options.burnInSeconds;
      where = "agreeing on another pass";
      if (!agreed(comm, again ? 1 : 0)) break;
    }
    // A pair that read slow is measured again before it is blamed: a figure the machine's other
    // work disturbed once does not repeat, a slow link does.
    const std::vector<std::pair<int, int>> suspects =
        suspectPairs(comm, self, layout, nics, measurements, expected, options.slowFraction);
    for (const Round& round : roundsForPairs(layout, suspects)) {
      for (int repeat = 0; repeat < kConfirmations; ++repeat) {
        where = str("re-measuring ", phaseName(round.phase), " pairs that read slow");
        probe.patternSeed = patternSeed(options.seed + 1, passes, round, repeat);
        for (Measurement& m : runRound(comm, round, probe, passes)) {
          m.confirmation = true;
          measurements.push_back(std::move(m));
        }
      }
    }
    if (options.collectives) {
      where = "the whole-job allreduce check";
      collectives = checkCollectives(comm, layout, options.messageBytes * 4, bisection.get());
    }
  } catch (const Error& error) {
    failed = true;
    failure.where = where;
    failure.message = error.what();
    for (int rank : ranksNamedIn(failure.message, size)) {
      if (rank != self) failure.ranksNamed.push_back(rank);
    }
  }
  // The job's communicator has failed: halve the job over the communicators split at the start,
  // to find the host every failing group holds.
  Clock::time_point bisectionStart = Clock::now();
  if (failed && bisection != nullptr && bisection->possible()) {
    BisectionResult found = bisection->run(options.messageBytes);
    failure.bisection = std::move(found.steps);
    failure.blamedHost = found.blamedHost;
  }

  int exitCode = kExitFailed;
  if (self == 0) {
    AnalysisInput input{&layout,
                        &nics,
                        &measurements,
                        &expected,
                        &collectives,
                        failed ? &failure : nullptr,
                        options.slowFraction};
    const Analysis analysis = analyse(input);
    RunRecord record{&options,      &layout,      &nics,
                     &measurements, &collectives, failed ? &failure : nullptr,
                     &analysis,     passes,       elapsed()};
    printSummary(record, std::cout);
    std::cout.flush();
    try {
      writeOutputs(record);
    } catch (const Error& error) {
      std::cerr << "hoop-validate: " << error.what() << '\n';
    }
    exitCode = analysis.exitCode;
  }
  if (failed) {
    if (self != 0) {
      std::cerr << "hoop-validate: rank " << self << " stopped in " << failure.where << ": "
                << failure.message << '\n';
      // Rank 0 reports for the job: give it the time-out it may still be waiting through and the
      // rest of its bisection, so the launcher does not stop it (on this rank's exit) before it
      // has written the report.
      const double bisecting =
          bisection == nullptr
              ? 0
              : bisection->worstSeconds() -
                    std::chrono::duration<double>(Clock::now() - bisectionStart).count();
      std::this_thread::sleep_for(
          std::chrono::duration<double>(std::max(0.0, bisecting) + timeout + 5));
    }
    hoopCommAbort(comm);
    return kExitFailed;
  }
  try {
    exitCode = agreed(comm, exitCode);
  } catch (const Error& error) {
    std::cerr << "hoop-validate: rank " << self << ": " << error.what() << '\n';
    exitCode = kExitFailed;
  }
  hoopCommDestroy(comm);
  return exitCode;
}

}  // namespace
}  // namespace hoop::validate

int main(int argc, char** argv) {
  using namespace hoop::validate;
  Options options;
  try {
    options = parseOptions(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError& error) {
    std::cerr << "hoop-validate: " << error.what() << "\n" << kUsage;
    return kExitUsage;
  }
  if (options.help) {
    std::cout << kUsage;
    return 0;
  }
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::cerr << "hoop-validate: " << error.what() << '\n';
    return kExitFailed;
  }
}
