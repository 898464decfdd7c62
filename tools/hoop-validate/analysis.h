// From the job's measurements to verdicts: per cell (a metric between two ranks) the median and
// spread of its samples against a reference (the operator's figure, or the cluster's median of
// its kind); slow cells intersected into blame for a link, a host (all its links slow) or a
// rail, with how many independent cells support each; corrupt data and failures on top.
#pragma once

#include <string>
#include <vector>

#include "expected.h"
#include "measure.h"
#include "plan.h"

namespace hoop::validate {

enum class Metric { kBandwidth, kBidirectional, kLatencyP50, kLatencyP99 };
inline constexpr Metric kMetrics[] = {Metric::kBandwidth, Metric::kBidirectional,
                                      Metric::kLatencyP50, Metric::kLatencyP99};
const char* metricName(Metric metric);
const char* metricUnit(Metric metric);
bool higherIsBetter(Metric metric);

// One metric between two ranks: from -> to for the one-way bandwidth, lower -> higher for the
// others (the same both ways).
struct Cell {
  Metric metric = Metric::kBandwidth;
  int from = -1;
  int to = -1;
  Phase phase = Phase::kIntraHost;
  std::string transport;
  std::vector<double> samples;
  double median = 0;
  double mad = 0;     // median absolute deviation of the samples
  double spread = 0;  // (max - min) / median
  bool bimodal = false;
  double reference = 0;         // what it is judged against
  std::string referenceSource;  // "expect" or "cluster"
  double clusterMedian = 0;     // the cluster's median of this kind
  double clusterMad = 0;
  double topologyCeiling = 0;  // bandwidth only; 0 unknown
  double ratio = 0;            // median / reference (reference / median for latency): < 1 worse
  bool slow = false;
};

struct Blame {
  std::string kind;  // "link", "host", "rail", "rank"
  std::string what;  // "h1 <-> h3", "h2", "rail 1 (eth1)", "rank 5"
  std::string why;
  int support = 0;         // independent cells or checks behind it
  int of = 0;              // of how many looked at
  std::vector<int> hosts;  // the hosts it touches
  bool failed = false;     // corrupt data or a failure, not only slowness
};

struct CollectiveOutcome {
  std::string schedule;
  bool ran = false;
  bool correct = false;
  double seconds = 0;
  double busGBps = 0;
  std::string error;
  std::vector<std::string> bisection;  // what each halving step found
  int blamedHost = -1;
};

// A run that ended early: the error this rank met, and when.
struct RunFailure {
  std::string where;  // "cross-host round 2 of pass 0"
  std::string message;
  std::vector<int> ranksNamed;         // ranks the message names (besides rank 0)
  std::vector<std::string> bisection;  // what each halving step found (bisection.h)
  int blamedHost = -1;                 // the host the bisection isolated; -1 none
};

struct HostVerdict {
  std::string verdict = "healthy";  // "healthy", "degraded", "failed"
  std::vector<std::string> reasons;
};

struct Analysis {
  std::vector<Cell> cells;
  std::vector<const Cell*> outliers;  // slow cells, worst first
  std::vector<Blame> blames;
  std::vector<std::string> notes;
  std::vector<HostVerdict> hosts;
  std::string verdict = "healthy";
  int exitCode = 0;
};

struct AnalysisInput {
  const Layout* layout = nullptr;
  const std::vector<RankNic>* nics = nullptr;
  const std::vector<Measurement>* measurements = nullptr;
  const ExpectedFigures* expected = nullptr;
  const std::vector<CollectiveOutcome>* collectives = nullptr;
  const RunFailure* failure = nullptr;  // null when the run finished
  double slowFraction = 0.5;
};

Analysis analyse(const AnalysisInput& input);

// Ranks a message names as "rank N (host": the peers an error is about.
std::vector<int> ranksNamedIn(const std::string& message, int size);

// Median and median absolute deviation; reorders nothing (copies).
double medianOfValues(std::vector<double> values);
double madOf(const std::vector<double>& values, double median);
// Whether the samples fall in two groups: a gap between consecutive sorted samples wider than a
// quarter of the median, with at least two samples and a quarter of them on each side.
bool looksBimodal(std::vector<double> samples);

}  // namespace hoop::validate
