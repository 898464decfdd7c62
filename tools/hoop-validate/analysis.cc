// Cells, references, slow cells, blame and verdicts (analysis.h).
#include "analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <tuple>

#include "base/error.h"

namespace hoop::validate {

namespace {

// A host blamed for its links: at least this many of its peer hosts slow, and this share.
constexpr int kHostMinSlowPeers = 2;
constexpr double kHostSlowShare = 0.75;
// Latency is noisier than bandwidth (a scheduler tick is a round trip): a cell is slow only when
// it is worse than its reference by the square of the bandwidth's factor.
double latencyFactor(double slowFraction) { return slowFraction * slowFraction; }
// A round trip's tail this long is a retransmission time-out (Linux waits 200 ms at least before
// sending a lost segment again), not a scheduler tick: one way, half a 100 ms round trip.
constexpr double kStallUs = 50'000;

double valueOf(const Measurement& m, Metric metric, bool lowerToHigher) {
  switch (metric) {
    case Metric::kBandwidth:
      return lowerToHigher ? m.figures.lowerToHigherGBps : m.figures.higherToLowerGBps;
    case Metric::kBidirectional: return m.figures.bidirectionalGBps;
    case Metric::kLatencyP50: return m.figures.latencyP50Us;
    case Metric::kLatencyP99: return m.figures.latencyP99Us;
  }
  return 0;
}

std::string hostLabel(const Layout& layout, int host) {
  return layout.hostNames[static_cast<size_t>(host)];
}

void addReason(HostVerdict& host, const std::string& verdict, const std::string& reason) {
  if (verdict == "failed" || (verdict == "degraded" && host.verdict == "healthy")) {
    host.verdict = verdict;
  }
  if (std::find(host.reasons.begin(), host.reasons.end(), reason) == host.reasons.end()) {
    host.reasons.push_back(reason);
  }
}

// Cells of every metric from the samples of every measurement.
std::vector<Cell> buildCells(const AnalysisInput& in) {
  std::map<std::tuple<Metric, int, int>, Cell> cells;
  for (const Measurement& m : *in.measurements) {
    for (Metric metric : kMetrics) {
      const bool oneWay = metric == Metric::kBandwidth;
      for (bool lowerToHigher : {true, false}) {
        if (!oneWay && !lowerToHigher) continue;
        const double value = valueOf(m, metric, lowerToHigher);
        if (!(value > 0)) continue;
        const int from = lowerToHigher ? m.a : m.b;
        const int to = lowerToHigher ? m.b : m.a;
        Cell& cell = cells[{metric, from, to}];
        cell.metric = metric;
        cell.from = from;
        cell.to = to;
        cell.phase = m.phase;
        cell.transport = m.transport;
        cell.samples.push_back(value);
      }
    }
  }
  std::vector<Cell> result;
  for (auto& [key, cell] : cells) {
    cell.median = medianOfValues(cell.samples);
    cell.mad = madOf(cell.samples, cell.median);
    const auto [low, high] = std::minmax_element(cell.samples.begin(), cell.samples.end());
    cell.spread = cell.median > 0 ? (*high - *low) / cell.median : 0;
    cell.bimodal = looksBimodal(cell.samples);
    result.push_back(std::move(cell));
  }
  return result;
}

// References and slowness: each cell against the operator's figure, else its kind's median.
void judgeCells(const AnalysisInput& in, std::vector<Cell>& cells) {
  std::map<std::tuple<Metric, Phase, std::string>, std::vector<double>> kinds;
  for (const Cell& cell : cells)
    kinds[{cell.metric, cell.phase, cell.transport}].push_back(cell.median);
  const Layout& layout = *in.layout;
  for (Cell& cell : cells) {
    const std::vector<double>& kind = kinds[{cell.metric, cell.phase, cell.transport}];
    cell.clusterMedian = medianOfValues(kind);
    cell.clusterMad = madOf(kind, cell.clusterMedian);
    const auto& table =
        higherIsBetter(cell.metric) ? in.expected->bandwidthGBps : in.expected->latencyUs;
    const auto given = table.find(cell.transport);
    double scale = 1;
    if (cell.metric == Metric::kBidirectional) scale = 2;  // both directions together
    if (given != table.end() && cell.metric != Metric::kLatencyP99) {
      cell.reference = given->second * scale;
      cell.referenceSource = "expect";
    } else {
      cell.reference = cell.clusterMedian;
      cell.referenceSource = "cluster";
    }
    if (higherIsBetter(cell.metric) && cell.phase == Phase::kCrossHost) {
      const int hostA = layout.hostOf[static_cast<size_t>(cell.from)];
      const int hostB = layout.hostOf[static_cast<size_t>(cell.to)];
      const auto& nics = *in.nics;
      const int sharing =
          static_cast<int>(std::max(layout.hostRanks[static_cast<size_t>(hostA)].size(),
                                    layout.hostRanks[static_cast<size_t>(hostB)].size()));
      cell.topologyCeiling = nicCeilingGBps(nics[static_cast<size_t>(cell.from)].gbps,
                                            nics[static_cast<size_t>(cell.to)].gbps, sharing) *
                             scale;
    }
    if (cell.reference <= 0 || cell.median <= 0) continue;
    if (higherIsBetter(cell.metric)) {
      cell.ratio = cell.median / cell.reference;
      cell.slow = cell.ratio < in.slowFraction;
    } else {
      cell.ratio = cell.reference / cell.median;
      // The tail of a few dozen round trips is their slowest one, which a scheduler tick on a
      // busy host sets: a verdict only when it is a stall, the mark of a link that drops packets.
      const bool stalled = cell.metric == Metric::kLatencyP99 && cell.median >= kStallUs;
      cell.slow = (cell.metric == Metric::kLatencyP50 || stalled) &&
                  cell.ratio < latencyFactor(in.slowFraction);
    }
  }
}

// Slow cells intersected: hosts whose links are slow to most of their peers, rails slow on most
// hosts, and the links that remain.
void localise(const AnalysisInput& in, Analysis& out) {
  const Layout& layout = *in.layout;
  const int hosts = layout.hosts();
  // Host pairs (lower host first): cells measured and slow, and within hosts the same per host.
  std::map<std::pair<int, int>, std::pair<int, int>> hostPairs;  // measured, slow
  std::map<int, std::pair<int, int>> intra;                      // by host: measured, slow
  std::map<std::pair<int, int>, std::pair<int, int>> rankPairsIntra;
  std::map<int, std::map<std::pair<int, int>, std::pair<int, int>>> rails;  // by local index
  for (const Cell& cell : out.cells) {
    // The tail is reported, and blamed only where it stalls (judgeCells).
    if (cell.metric == Metric::kLatencyP99 && !cell.slow) continue;
    const int hostA = layout.hostOf[static_cast<size_t>(cell.from)];
    const int hostB = layout.hostOf[static_cast<size_t>(cell.to)];
    if (cell.phase == Phase::kIntraHost) {
      intra[hostA].first++;
      intra[hostA].second += cell.slow ? 1 : 0;
      auto& pair = rankPairsIntra[{std::min(cell.from, cell.to), std::max(cell.from, cell.to)}];
      pair.first++;
      pair.second += cell.slow ? 1 : 0;
      continue;
    }
    auto& pair = hostPairs[{std::min(hostA, hostB), std::max(hostA, hostB)}];
    pair.first++;
    pair.second += cell.slow ? 1 : 0;
    auto& rail = rails[layout.localIndexOf[static_cast<size_t>(cell.from)]]
                      [{std::min(hostA, hostB), std::max(hostA, hostB)}];
    rail.first++;
    rail.second += cell.slow ? 1 : 0;
  }
  // Rails: where hosts have several NICs, a rail slow between most of the host pairs it joins.
  auto railNic = [&](int rail) {
    for (const std::vector<int>& ranks : layout.hostRanks) {
      if (static_cast<size_t>(rail) < ranks.size()) {
        return (*in.nics)[static_cast<size_t>(ranks[static_cast<size_t>(rail)])].name;
      }
    }
    return std::string();
  };
  bool severalNics = false;
  for (const std::vector<int>& ranks : layout.hostRanks) {
    for (int rank : ranks) {
      severalNics |= (*in.nics)[static_cast<size_t>(rank)].name !=
                     (*in.nics)[static_cast<size_t>(ranks.front())].name;
    }
  }
  std::set<int> blamedRails;
  std::vector<int> everyHost;  // a rail runs through every host
  for (int host = 0; host < hosts; ++host) everyHost.push_back(host);
  if (rails.size() > 1 && severalNics) {
    for (const auto& [rail, pairs] : rails) {
      int slowPairs = 0;
      for (const auto& [pair, counts] : pairs) slowPairs += counts.second > 0 ? 1 : 0;
      const int total = static_cast<int>(pairs.size());
      if (slowPairs >= 3 && slowPairs >= kHostSlowShare * total) {
        blamedRails.insert(rail);
        out.blames.push_back(
            {"rail", str("rail ", rail, " (", railNic(rail), ")"),
             str("slow between ", slowPairs, " of the ", total, " host pairs it joins"), slowPairs,
             total, everyHost, false});
      }
    }
  }
  // NICs: where hosts have several, one host's rail i slow towards most of the hosts it was
  // measured with on that rail while another of its rails is not: that NIC (or its cable or
  // switch port), not the host, which still reaches its peers well through its other NICs.
  std::set<std::pair<int, int>> blamedNics;  // host, rail
  if (rails.size() > 1 && severalNics) {
    for (int host = 0; host < hosts; ++host) {
      std::map<int, std::pair<int, int>> byRail;  // rail: peer hosts measured, slow towards
      for (const auto& [rail, pairs] : rails) {
        if (blamedRails.count(rail)) continue;
        for (const auto& [pair, counts] : pairs) {
          if (pair.first != host && pair.second != host) continue;
          byRail[rail].first++;
          byRail[rail].second += counts.second > 0 ? 1 : 0;
        }
      }
      auto mostlySlow = [](const std::pair<int, int>& counts) {
        return counts.second >= kHostMinSlowPeers && counts.second >= kHostSlowShare * counts.first;
      };
      bool aRailIsWell = false;
      for (const auto& [rail, counts] : byRail)
        aRailIsWell |= counts.first > 0 && !mostlySlow(counts);
      if (!aRailIsWell) continue;  // every rail slow: the host, below
      for (const auto& [rail, counts] : byRail) {
        if (!mostlySlow(counts)) continue;
        blamedNics.insert({host, rail});
        const int rank = layout.hostRanks[static_cast<size_t>(host)][static_cast<size_t>(rail)];
        out.blames.push_back(
            {"nic",
             str(hostLabel(layout, host), " ", (*in.nics)[static_cast<size_t>(rank)].name,
                 " (rail ", rail, ")"),
             str("slow to ", counts.second, " of the ", counts.first,
                 " hosts it was measured with on rail ", rail, "; the host's other rails are not"),
             counts.second,
             counts.first,
             {host},
             false});
      }
    }
  }
  // What a blamed rail or NIC explains is not counted again against hosts and links.
  auto explained = [&](int rail, const std::pair<int, int>& pair) {
    return blamedRails.count(rail) > 0 || blamedNics.count({pair.first, rail}) > 0 ||
           blamedNics.count({pair.second, rail}) > 0;
  };
  if (!blamedRails.empty() || !blamedNics.empty()) {
    for (auto& [pair, counts] : hostPairs) counts.second = 0;
    for (const auto& [rail, pairs] : rails) {
      for (const auto& [pair, counts] : pairs) {
        if (!explained(rail, pair)) hostPairs[pair].second += counts.second;
      }
    }
  }
  // Hosts: slow towards most of the peers they were measured with.
  std::set<int> blamedHosts;
  for (int host = 0; host < hosts; ++host) {
    int peers = 0;
    int slowPeers = 0;
    for (const auto& [pair, counts] : hostPairs) {
      if (pair.first != host && pair.second != host) continue;
      peers++;
      slowPeers += counts.second > 0 ? 1 : 0;
    }
    if (slowPeers >= kHostMinSlowPeers && slowPeers >= kHostSlowShare * peers) {
      blamedHosts.insert(host);
      out.blames.push_back(
          {"host",
           hostLabel(layout, host),
           str("slow to ", slowPeers, " of the ", peers, " hosts it was measured with"),
           slowPeers,
           peers,
           {host},
           false});
    }
    const auto inside = intra.find(host);
    if (inside != intra.end() && inside->second.second > 0 &&
        inside->second.second == inside->second.first && inside->second.first >= 2 &&
        layout.hostRanks[static_cast<size_t>(host)].size() >= 3) {
      blamedHosts.insert(host);
      out.blames.push_back({"host",
                            hostLabel(layout, host),
                            "every link between its own ranks slow",
                            inside->second.second,
                            inside->second.first,
                            {host},
                            false});
    }
  }
  // Links: slow host pairs that no blamed host or rail explains.
  for (const auto& [pair, counts] : hostPairs) {
    if (counts.second == 0) continue;
    if (blamedHosts.count(pair.first) || blamedHosts.count(pair.second)) continue;
    bool railExplains = true;
    for (const auto& [rail, pairs] : rails) {
      const auto found = pairs.find(pair);
      if (found != pairs.end() && found->second.second > 0 && !explained(rail, pair)) {
        railExplains = false;
      }
    }
    if (railExplains) continue;
    out.blames.push_back({"link",
                          hostLabel(layout, pair.first) + " <-> " + hostLabel(layout, pair.second),
                          str(counts.second, " of its ", counts.first, " cells slow"),
                          counts.second,
                          counts.first,
                          {pair.first, pair.second},
                          false});
  }
  for (const auto& [pair, counts] : rankPairsIntra) {
    const int host = layout.hostOf[static_cast<size_t>(pair.first)];
    if (counts.second == 0 || blamedHosts.count(host)) continue;
    out.blames.push_back(
        {"link",
         str("rank ", pair.first, " <-> rank ", pair.second, " (", hostLabel(layout, host), ")"),
         str(counts.second, " of its ", counts.first, " cells slow"),
         counts.second,
         counts.first,
         {host},
         false});
  }
}

// Corrupt data: each receiver's first wrong byte; a sender wrong to every receiver is blamed.
void judgeData(const AnalysisInput& in, Analysis& out) {
  const Layout& layout = *in.layout;
  std::map<int, std::set<int>> receiversOf;  // by sender
  std::map<int, std::set<int>> badReceiversOf;
  std::map<std::pair<int, int>, std::pair<PatternCheck, int>> badLinks;  // sender, receiver
  for (const Measurement& m : *in.measurements) {
    for (const auto& [sender, receiver, check] :
         {std::tuple{m.b, m.a, m.atA}, std::tuple{m.a, m.b, m.atB}}) {
      receiversOf[sender].insert(receiver);
      if (check.ok) continue;
      badReceiversOf[sender].insert(receiver);
      auto [it, added] = badLinks.try_emplace({sender, receiver}, check, 0);
      it->second.second++;
    }
  }
  std::set<int> blamedSenders;
  for (const auto& [sender, bad] : badReceiversOf) {
    const size_t all = receiversOf[sender].size();
    if (bad.size() >= 2 && bad.size() == all) {
      blamedSenders.insert(sender);
      const PatternCheck& first = badLinks.at({sender, *bad.begin()}).first;
      const int host = layout.hostOf[static_cast<size_t>(sender)];
      out.blames.push_back(
          {"rank",
           str("rank ", sender, " (", hostLabel(layout, host), ")"),
           str("corrupts what it sends: every receiver found a wrong byte (first at "
               "offset ",
               first.offset, ")"),
           static_cast<int>(bad.size()),
           static_cast<int>(all),
           {host},
           true});
    }
  }
  for (const auto& [link, found] : badLinks) {
    const auto& [check, times] = found;
    const int hostA = layout.hostOf[static_cast<size_t>(link.first)];
    const int hostB = layout.hostOf[static_cast<size_t>(link.second)];
    out.notes.push_back(str("corrupt data from rank ", link.first, " (", hostLabel(layout, hostA),
                            ") to rank ", link.second, " (", hostLabel(layout, hostB),
                            "): ", check.describe(), " (", times, " measurement(s))"));
    if (blamedSenders.count(link.first)) continue;
    out.blames.push_back({"link",
                          str("rank ", link.first, " -> rank ", link.second),
                          "corrupt data: " + check.describe(),
                          times,
                          times,
                          {hostA, hostB},
                          true});
  }
}

}  // namespace

const char* metricName(Metric metric) {
  switch (metric) {
    case Metric::kBandwidth: return "bandwidth";
    case Metric::kBidirectional: return "bidirectional";
    case Metric::kLatencyP50: return "latency_p50";
    case Metric::kLatencyP99: return "latency_p99";
  }
  return "?";
}

const char* metricUnit(Metric metric) { return higherIsBetter(metric) ? "GB/s" : "us"; }

bool higherIsBetter(Metric metric) {
  return metric == Metric::kBandwidth || metric == Metric::kBidirectional;
}

double medianOfValues(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

double madOf(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return medianOfValues(std::move(deviations));
}

bool looksBimodal(std::vector<double> samples) {
  if (samples.size() < 4) return false;
  std::sort(samples.begin(), samples.end());
  const double median = medianOfValues(samples);
  const size_t least = std::max<size_t>(2, samples.size() / 4);
  for (size_t i = least; i + least <= samples.size(); ++i) {
    if (samples[i] - samples[i - 1] > 0.25 * median) return true;
  }
  return false;
}

std::vector<int> ranksNamedIn(const std::string& message, int size) {
  static const std::regex named(R"(rank (\d+) \(host)");
  // The hang report that comes with a time-out says which ranks gave no answer at all: where it
  // names some, those are the ones to look at, not every rank that waited on them.
  std::set<int> ranks;
  std::set<int> silent;
  size_t begin = 0;
  while (begin < message.size()) {
    size_t end = message.find('\n', begin);
    if (end == std::string::npos) end = message.size();
    const std::string line = message.substr(begin, end - begin);
    for (auto it = std::sregex_iterator(line.begin(), line.end(), named);
         it != std::sregex_iterator(); ++it) {
      const int rank = std::stoi((*it)[1].str());
      if (rank < 0 || rank >= size) continue;
      ranks.insert(rank);
      if (line.find("no answer") != std::string::npos) silent.insert(rank);
    }
    begin = end + 1;
  }
  const std::set<int>& chosen = silent.empty() ? ranks : silent;
  return {chosen.begin(), chosen.end()};
}

Analysis analyse(const AnalysisInput& in) {
  Analysis out;
  const Layout& layout = *in.layout;
  out.hosts.resize(static_cast<size_t>(layout.hosts()));
  out.cells = buildCells(in);
  judgeCells(in, out.cells);
  for (const Cell& cell : out.cells) {
    if (cell.slow) out.outliers.push_back(&cell);
    if (cell.bimodal) {
      out.notes.push_back(str(metricName(cell.metric), " rank ", cell.from, " -> rank ", cell.to,
                              " is bimodal over ", cell.samples.size(), " samples (spread ",
                              static_cast<int>(cell.spread * 100), "%)"));
    }
  }
  std::stable_sort(out.outliers.begin(), out.outliers.end(),
                   [](const Cell* x, const Cell* y) { return x->ratio < y->ratio; });
  localise(in, out);
  judgeData(in, out);
  // Whole-job collectives: a wrong result or a failure fails the job; bisection names a host.
  for (const CollectiveOutcome& c : *in.collectives) {
    if (c.ran && c.correct) continue;
    const std::string what =
        "allreduce (" + c.schedule + ") " + (c.ran ? "gave a wrong result" : "failed: " + c.error);
    if (c.blamedHost >= 0) {
      out.blames.push_back({"host",
                            hostLabel(layout, c.blamedHost),
                            what + "; bisection isolated it",
                            static_cast<int>(c.bisection.size()),
                            static_cast<int>(c.bisection.size()),
                            {c.blamedHost},
                            true});
    } else {
      out.notes.push_back(what);
      out.verdict = "failed";
    }
  }
  if (in.failure != nullptr) {
    std::vector<int> hostsNamed;
    for (int rank : in.failure->ranksNamed) {
      const int host = layout.hostOf[static_cast<size_t>(rank)];
      if (std::find(hostsNamed.begin(), hostsNamed.end(), host) == hostsNamed.end()) {
        hostsNamed.push_back(host);
      }
    }
    std::string named;
    for (int rank : in.failure->ranksNamed)
      named += (named.empty() ? "rank " : ", rank ") + std::to_string(rank);
    out.blames.push_back({"failure", named.empty() ? "the job" : named,
                          "the run ended in " + in.failure->where + ": " +
                              in.failure->message.substr(0, in.failure->message.find('\n')),
                          1, 1, hostsNamed, true});
    if (in.failure->blamedHost >= 0) {
      const int steps = static_cast<int>(in.failure->bisection.size());
      out.blames.push_back({"host",
                            hostLabel(layout, in.failure->blamedHost),
                            "every group holding it failed after the job did; bisection isolated "
                            "it in " +
                                std::to_string(steps) + " step(s)",
                            steps,
                            steps,
                            {in.failure->blamedHost},
                            true});
    }
    out.verdict = "failed";
  }
  for (const Blame& blame : out.blames) {
    for (int host : blame.hosts) {
      addReason(out.hosts[static_cast<size_t>(host)], blame.failed ? "failed" : "degraded",
                blame.kind + " " + blame.what + ": " + blame.why);
    }
    if (blame.failed) {
      out.verdict = "failed";
    } else if (out.verdict == "healthy") {
      out.verdict = "degraded";
    }
  }
  out.exitCode = out.verdict == "failed" ? 2 : out.verdict == "degraded" ? 1 : 0;
  return out;
}

}  // namespace hoop::validate
