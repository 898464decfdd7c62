#include "algorithms/tuner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "algorithms/collective.h"
#include "algorithms/schedule_trial.h"
#include "algorithms/team.h"
#include "base/env.h"
#include "base/error.h"

namespace hoop {
namespace {

static_assert(CostModel{}.watchCalls == kDefaultWatchInterval);

// "alpha_us,GB/s" (GB = 1e9 bytes).
LinkCost linkFromEnv(const char* name, LinkCost fallback) {
  auto text = envString(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double alpha = std::strtod(text->c_str(), &end);
  double gbps = -1;
  if (end != nullptr && *end == ',') gbps = std::strtod(end + 1, &end);
  if (end == nullptr || *end != '\0' || !(alpha >= 0) || !(gbps > 0)) {
    fail(hoopInvalidArgument, name, "='", *text,
         "' is not 'alpha_us,GB/s' (latency per message in microseconds, bandwidth > 0)");
  }
  return {alpha, gbps * 1e3};
}

}  // namespace

CostModel CostModel::fromEnvironment() {
  CostModel model;
  model.shm = linkFromEnv("HOOP_TUNE_SHM", model.shm);
  model.tcp = linkFromEnv("HOOP_TUNE_TCP", model.tcp);
  model.shmFromEnv = envString("HOOP_TUNE_SHM").has_value();
  model.tcpFromEnv = envString("HOOP_TUNE_TCP").has_value();
  model.calibrate = envInt("HOOP_TUNE_CALIBRATE", model.calibrate ? 1 : 0) != 0;
  model.trial = envInt("HOOP_TUNE_TRIAL", model.trial ? 1 : 0) != 0;
  const long long watch = envInt("HOOP_TUNE_WATCH", static_cast<long long>(kDefaultWatchInterval));
  if (watch != 0 && (watch < static_cast<long long>(kWatchedCalls) ||
                     watch > static_cast<long long>(kMostWatchInterval))) {
    fail(hoopInvalidArgument, "HOOP_TUNE_WATCH='", watch,
         "' is not 0 (no watch) or a count of calls from ", kWatchedCalls,
         " (the calls each check times) to ", kMostWatchInterval);
  }
  model.watchCalls = static_cast<size_t>(watch);
  if (auto text = envString("HOOP_TUNE_REDUCE")) {
    model.reduceFromEnv = true;
    char* end = nullptr;
    const double gbps = std::strtod(text->c_str(), &end);
    if (end == nullptr || *end != '\0' || !(gbps > 0)) {
      fail(hoopInvalidArgument, "HOOP_TUNE_REDUCE='", *text, "' is not a rate in GB/s (> 0)");
    }
    model.reduceBytesPerUs = gbps * 1e3;
  }
  return model;
}

CallShape callShape(const Team& comm, const CollectiveArgs& args) {
  CallShape shape;
  const bool perRank = args.kind == OpKind::kAllGather;
  shape.bytes = args.bytes() * (perRank ? static_cast<size_t>(comm.size()) : 1);
  shape.ranks = static_cast<size_t>(comm.size());
  shape.hosts = static_cast<size_t>(comm.hostCount());
  shape.ranksPerHost = comm.localRing().size();
  shape.sharedMemory = comm.everyPeerSharesMemory();
  shape.pieceLimit = comm.chunkBytes();
  shape.ranksPerCpu = comm.ranksPerCpu();
  shape.level2BytesPerCpu = comm.level2BytesPerCpu();
  return shape;
}

namespace {

// Whether a flat schedule's slowest link is the network: as soon as it spans hosts.
bool overNetwork(const CallShape& shape) { return shape.hosts > 1 || !shape.sharedMemory; }

const LinkCost& flatLink(const CallShape& shape, const CostModel& model) {
  return overNetwork(shape) ? model.tcp : model.shm;
}

// Messages posted together overlap their latencies, but each one beyond the first may still
// cost a share of a step's fixed work: a slot header over shm, a system call on each side over
// TCP, which the CPU does one after another.
double extraMessageShare(const CallShape& shape) {
  return overNetwork(shape) ? kCostDefaults.extraMessageShareTcp
                            : kCostDefaults.extraMessageShareShm;
}

// Whether the ranks of a single-host job have CPUs to spare: at least two CPUs a rank, none
// bound to fewer. There the loopback copies of different ranks run at once and bytes cost what
// they cost, where ranks that share CPUs take turns and what counts is keeping pieces in cache
// and waking ranks seldom: the double tree's trade.
bool cpusToSpare(const CallShape& shape) {
  return shape.hosts == 1 && shape.ranksPerCpu <= kCostDefaults.spareCpusRanksPerCpu;
}

// The model with the wake-ups of ranks that share CPUs in every shm step's latency
// (sharedCpuWakeUpUsPerRank), where its shm latencies are the defaults, read with a CPU a rank.
CostModel withSharedCpuWakeUps(const CostModel& model, const CallShape& shape) {
  if (shape.hosts != 1 || shape.ranksPerCpu <= 1 || model.shmFromEnv || model.shmLatencyMeasured) {
    return model;
  }
  CostModel shared = model;
  const double wakeUpUs = kCostDefaults.sharedCpuWakeUpUsPerRank * shape.ranksPerCpu;
  shared.shm.alphaUs += wakeUpUs;
  shared.eagerAlphaUs += wakeUpUs;
  return shared;
}

// Whether two-shot's pieces of S/n pass its slice (the chunk size over TCP), so it runs in
// several rounds.
bool twoShotSliced(const CallShape& shape) {
  const double piece = static_cast<double>(shape.bytes) / static_cast<double>(shape.ranks);
  return piece > static_cast<double>(twoShotSliceBytes(shape));
}

// Where the model prices two-shot at all. Over TCP on one host, sliced where ranks share CPUs,
// it is priced as the ring, which it ties and which keeps the pick by coming first (the trial,
// when on, times both); between hosts it is priced only in one round, unmeasured there in slices
// (docs/tuner.md, twoShotBytesTcpSliced).
bool twoShotPriced(const CallShape& shape) {
  return !overNetwork(shape) || shape.hosts == 1 || shape.ranks <= 2 || !twoShotSliced(shape);
}

// The two-shot allreduce's byte terms against the ring's.
// - Two ranks: one message each way per step; it is the ring.
// - Over TCP its streams at once keep the connections busier, in one round; sliced, where ranks
//   have CPUs to spare, less so; where they share CPUs, the ring's.
// - Over shm, in slices that stay in the level-2 cache (twoShotSliceBytes), from 4 ranks on:
//   the ring's 2(n-1) steps move in lockstep, where two-shot's n-1 messages of a step land in
//   any order. At 3 ranks, two steps against four, it is a little behind the ring.
double twoShotByteFactor(const CallShape& shape) {
  const CostDefaults& d = kCostDefaults;
  if (shape.ranks <= 2) return 1.0;
  if (overNetwork(shape)) {
    if (cpusToSpare(shape)) return d.twoShotBytesTcpSpareCpus;
    return twoShotSliced(shape) ? d.twoShotBytesTcpSliced : d.twoShotBytesTcpOneRound;
  }
  return shape.ranks >= 4 ? d.twoShotBytesShmFourUp : d.twoShotBytesShmThree;
}

bool hierarchical(const CallShape& shape) { return shape.ranksPerHost >= 2 && shape.hosts >= 2; }

double log2Ceil(size_t n) { return std::ceil(std::log2(static_cast<double>(n))); }

// A pipeline: how many hops the last piece travels, what a piece-step costs per message and per
// byte (a node that sends each piece to two children pays its bytes twice).
struct Pipeline {
  double depth;
  double alphaUs;
  double usPerByte;
};

std::optional<Pipeline> pipelineOf(OpKind kind, ScheduleId id, const CallShape& shape,
                                   const CostModel& model) {
  const bool reducing = kind == OpKind::kReduce;
  if (kind != OpKind::kBroadcast && !reducing) return std::nullopt;
  const double n = static_cast<double>(shape.ranks);
  const double reduceUsPerByte = reducing ? 1 / model.reduceBytesPerUs : 0;
  const LinkCost& link = flatLink(shape, model);
  if (id == ScheduleId::kRing) {
    return Pipeline{n - 1, link.alphaUs, 1 / link.bytesPerUs + reduceUsPerByte};
  }
  if (id == ScheduleId::kTree) {
    // A binary tree over n ranks is floor(log2 n) hops deep; inner nodes serve two children.
    const double depth = std::floor(std::log2(n));
    return Pipeline{depth, link.alphaUs, 2 * (1 / link.bytesPerUs + reduceUsPerByte)};
  }
  if (id == ScheduleId::kHierarchical && !reducing && hierarchical(shape)) {
    // One chain across hosts, then one through each host, pipelined into each other: the slower
    // link sets the pace.
    const double depth = static_cast<double>(shape.hosts - 1 + shape.ranksPerHost - 1);
    return Pipeline{depth, std::max(model.tcp.alphaUs, model.shm.alphaUs),
                    std::max(1 / model.tcp.bytesPerUs, 1 / model.shm.bytesPerUs)};
  }
  return std::nullopt;
}

// Messages `bytes` take in pieces of at most `pieceBytes` (at least one).
double piecesOf(double bytes, double pieceBytes) {
  return std::max(1.0, std::ceil(bytes / pieceBytes));
}

double pipelineUs(const Pipeline& p, double bytes, double pieceBytes) {
  const double pieces = piecesOf(bytes, pieceBytes);
  const double piece = std::min(bytes, pieceBytes);
  return (pieces + p.depth - 1) * (p.alphaUs + piece * p.usPerByte);
}

// Recursive halving then doubling over the largest power of two p <= n: 2 log2(p) rounds moving
// the ring's bytes, each round's pieces traded one after another; ranks beyond p fold their
// whole buffer in first and get the result back last (two more steps of the whole buffer).
double rabenseifnerUs(const CallShape& shape, const CostModel& model) {
  const LinkCost& link = flatLink(shape, model);
  const double s = static_cast<double>(shape.bytes);
  const double limit = static_cast<double>(shape.pieceLimit);
  const size_t p = std::bit_floor(shape.ranks);
  double messages = 0;
  for (size_t width = p / 2; width >= 1; width /= 2) {
    // Halving round: width/p of the buffer goes to the partner; doubling returns as much.
    messages += 2 * piecesOf(s * static_cast<double>(width) / static_cast<double>(p), limit);
  }
  const double share = (static_cast<double>(p) - 1) / static_cast<double>(p);
  double us = messages * link.alphaUs +
              kCostDefaults.rabenseifnerBytes *
                  (2 * share * s / link.bytesPerUs + share * s / model.reduceBytesPerUs);
  if (p != shape.ranks) {
    us += 2 * piecesOf(s, limit) * link.alphaUs + 2 * s / link.bytesPerUs +
          s / model.reduceBytesPerUs;
  }
  return us;
}

// The ring's bytes and reductions: each rank moves 2(n-1)/n of the buffer and folds (n-1)/n.
double ringBytesUs(const CallShape& shape, const CostModel& model) {
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  return 2 * (n - 1) / n * s / flatLink(shape, model).bytesPerUs +
         (n - 1) / n * s / model.reduceBytesPerUs;
}

// Two binary trees, each carrying half the buffer up to its root and back down, piece by piece,
// piece k+1 going up while piece k comes down: a pipeline 2 floor(log2 n) hops deep.
// - A hop is one message one way, where a ring step sends and receives: a share of a step.
//   At 2 ranks both trees are one exchange: the ring's step, and the ring's bytes.
// - Each further piece adds a fraction of a step: its latency hides behind the others' bytes.
// - Bytes: each rank forwards about twice the ring's, but both trees' pieces move at once and
//   stay in cache. Over shm a tree of few pieces has little to overlap, and its hops run one
//   after another: the pipeline's fill, (hops - 1) / (2 pieces), scales the byte term. Over TCP
//   the kernel's copies overlap anyway; where ranks have CPUs to spare, the extra bytes count.
double doubleTreeUs(const CallShape& shape, const CostModel& model) {
  const double pieces = piecesOf(static_cast<double>(shape.bytes) / 2,
                                 static_cast<double>(treeAllReducePieceBytes(shape)));
  const double hops = 2 * std::floor(std::log2(static_cast<double>(shape.ranks)));
  const bool two = shape.ranks == 2;
  const CostDefaults& d = kCostDefaults;
  const double hopShare = two ? 1.0 : overNetwork(shape) ? d.treeHopShareTcp : d.treeHopShareShm;
  const double byteFactor = two ? 1.0
                            : overNetwork(shape)
                                ? (cpusToSpare(shape) ? d.treeBytesTcpSpareCpus : d.treeBytesTcp)
                                : d.treeBytesShm * (1 + (hops - 1) / (2 * pieces));
  return (hops * hopShare + (pieces - 1) * d.treeStepsPerExtraPiece) *
             flatLink(shape, model).alphaUs +
         byteFactor * ringBytesUs(shape, model);
}

// Two ranks over TCP: every schedule is a run of exchanges with the one peer, both sending and
// receiving at once: the step calibration times. An exchange's cost is not linear in its bytes
// there: a receiver copies a segment out only once the sender has copied it in, so each exchange
// also pays its first kCostDefaults.tcpFillBytes once more before the two copies overlap. At
// more ranks steps overlap across peers; the fitted factors above stand for that, and the fill is
// not separated from them.
constexpr double kTcpFillBytes = kCostDefaults.tcpFillBytes;

// The calibrated rate is a kLinkStepBytes exchange's, fill included: the fill taken back out.
double tcpStreamingUsPerByte(const LinkCost& link) {
  const double stepBytes = static_cast<double>(kLinkStepBytes);
  return stepBytes / (stepBytes + kTcpFillBytes) / link.bytesPerUs;
}

double tcpExchangeUs(const LinkCost& link, double bytes) {
  return link.alphaUs + (bytes + std::min(bytes, kTcpFillBytes)) * tcpStreamingUsPerByte(link);
}

std::optional<double> pairOverTcpUs(ScheduleId id, const CallShape& shape, const CostModel& model) {
  const double s = static_cast<double>(shape.bytes);
  const double limit = static_cast<double>(shape.pieceLimit);
  const double r = model.reduceBytesPerUs;
  const LinkCost& link = model.tcp;
  // The ring (two-shot and the double tree are the same exchanges at 2 ranks): half the buffer
  // each way to reduce, the reduced half back, in pieces; consecutive pieces overlap, so two
  // exchanges' latency and fill, and the rest of the bytes streaming behind them.
  const double half = std::min(s / 2, limit);
  const double ringUs =
      2 * tcpExchangeUs(link, half) + (s - 2 * half) * tcpStreamingUsPerByte(link) + s / 2 / r;
  switch (id) {
    case ScheduleId::kRing: return ringUs;
    case ScheduleId::kTwoShot:
      return twoShotPriced(shape) ? std::optional<double>(ringUs) : std::nullopt;
    case ScheduleId::kTree: {
      const double pieces = piecesOf(s / 2, static_cast<double>(treeAllReducePieceBytes(shape)));
      return ringUs + (pieces - 1) * kCostDefaults.treeStepsPerExtraPiece * link.alphaUs;
    }
    case ScheduleId::kRecursiveDoubling: {
      // The whole buffer once each way, piece after piece (each waits for the one before).
      const double pieces = piecesOf(s, limit);
      return pieces * tcpExchangeUs(link, s / pieces) + s / r;
    }
    // One exchange of the whole buffer and one fold, the own input read where it lies: recursive
    // doubling's price up to one piece, less above it.
    case ScheduleId::kDirect: return tcpExchangeUs(link, s) + s / r;
    default: return std::nullopt;  // the general formulas below
  }
}

std::optional<double> allReduceUs(ScheduleId id, const CallShape& shape, const CostModel& model) {
  if (shape.ranks == 2 && overNetwork(shape)) {
    if (auto us = pairOverTcpUs(id, shape, model)) return us;
  }
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const double r = model.reduceBytesPerUs;
  const LinkCost& link = flatLink(shape, model);
  switch (id) {
    case ScheduleId::kRing: {
      // 2(n-1) steps of S/n each: the bandwidth-optimal volume, the most steps.
      return 2 * (n - 1) * link.alphaUs + ringBytesUs(shape, model);
    }
    case ScheduleId::kDirect: {
      // One step, but every rank sends and reduces (n-1) whole buffers. Over shm each is copied
      // out of its slot first (the ring reduces straight out of one); a TCP receive lands in place.
      // From 3 ranks, in place, ranks from 2 on also copy their own input beside the others' (the
      // fold writes over it before it would read it), and the slowest rank sets the time.
      const double passes = overNetwork(shape) ? 1 : 2;
      const double ownCopy = shape.ranks > 2 ? s / r : 0;
      return link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) +
             (n - 1) * s / link.bytesPerUs + passes * (n - 1) * s / r + ownCopy;
    }
    case ScheduleId::kTwoShot: {
      if (!twoShotPriced(shape)) return std::nullopt;  // forced, it still runs
      // Two steps, each posting n-1 messages of S/n at once; the ring's volume, and the owner
      // folds n copies of its piece (twoShotByteFactor: how those bytes move against the ring's).
      return 2 * link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) +
             twoShotByteFactor(shape) * ringBytesUs(shape, model);
    }
    case ScheduleId::kOneShot: {
      // One eager handshake per peer; each rank copies its input into every peer's eager buffer
      // and reduces the peers' inputs where they lie: memory passes, at about the kernel's rate.
      return model.eagerAlphaUs + 2 * (n - 1) * s / r;
    }
    case ScheduleId::kHierarchical: {
      if (!hierarchical(shape)) return std::nullopt;
      const double l = static_cast<double>(shape.ranksPerHost);
      const double h = static_cast<double>(shape.hosts);
      const double within = 2 * (l - 1) * model.shm.alphaUs +
                            2 * (l - 1) / l * s / model.shm.bytesPerUs + (l - 1) / l * s / r;
      const double piece = s / l;
      const double across = 2 * (h - 1) * model.tcp.alphaUs +
                            2 * (h - 1) / h * piece / model.tcp.bytesPerUs +
                            (h - 1) / h * piece / r;
      return within + across;
    }
    case ScheduleId::kRecursiveDoubling: {
      // log2 rounds of the whole buffer; a non-power of two folds in and out (two more steps).
      const bool powerOfTwo = (shape.ranks & (shape.ranks - 1)) == 0;
      const double rounds = std::floor(std::log2(n)) + (powerOfTwo ? 0 : 2);
      // Each round's data is combined where it arrives (a shm slot, or the staging buffer a TCP
      // receive lands in).
      return rounds * (link.alphaUs + s / link.bytesPerUs + s / r);
    }
    case ScheduleId::kRabenseifner: return rabenseifnerUs(shape, model);
    case ScheduleId::kTree: return doubleTreeUs(shape, model);
    default: return std::nullopt;
  }
}

std::optional<double> allGatherUs(ScheduleId id, const CallShape& shape, const CostModel& model) {
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const LinkCost& link = flatLink(shape, model);
  switch (id) {
    case ScheduleId::kRing: return (n - 1) * (link.alphaUs + s / n / link.bytesPerUs);
    case ScheduleId::kBruck: {
      // ceil(log2 n) rounds moving the ring's bytes in all, then one local rotation of the output
      // (a copy, at about the reduction kernel's rate).
      return log2Ceil(shape.ranks) * link.alphaUs + (n - 1) / n * s / link.bytesPerUs +
             s / model.reduceBytesPerUs;
    }
    case ScheduleId::kHierarchical: {
      if (!hierarchical(shape)) return std::nullopt;
      const double l = static_cast<double>(shape.ranksPerHost);
      const double h = static_cast<double>(shape.hosts);
      return (h - 1) * (model.tcp.alphaUs + s / n / model.tcp.bytesPerUs) +
             (l - 1) * (model.shm.alphaUs + s / l / model.shm.bytesPerUs);
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<double> predictUs(OpKind kind, ScheduleId id, const CallShape& shape,
                                const CostModel& given, size_t pieceBytes) {
  if (shape.ranks <= 1) return 0.0;
  const CostModel model = withSharedCpuWakeUps(given, shape);
  switch (kind) {
    case OpKind::kAllReduce: return allReduceUs(id, shape, model);
    case OpKind::kAllGather: return allGatherUs(id, shape, model);
    case OpKind::kBroadcast:
    case OpKind::kReduce: {
      const std::optional<Pipeline> p = pipelineOf(kind, id, shape, model);
      if (!p) return std::nullopt;
      const size_t piece =
          pieceBytes != 0 ? pieceBytes : pipelinePieceBytes(kind, id, shape, model, SIZE_MAX);
      return pipelineUs(*p, static_cast<double>(shape.bytes), static_cast<double>(piece));
    }
    default: return std::nullopt;
  }
}

size_t treeAllReducePieceBytes(const CallShape& shape) {
  return std::min(
      overNetwork(shape) ? kCostDefaults.treePieceBytesTcp : kCostDefaults.treePieceBytesShm,
      shape.pieceLimit);
}

size_t twoShotSliceBytes(const CallShape& shape) {
  if (overNetwork(shape)) return shape.pieceLimit;
  const double cache = static_cast<double>(shape.level2BytesPerCpu != 0 ? shape.level2BytesPerCpu
                                                                        : kAssumedLevel2Bytes);
  const double slicesPerCpu =
      std::max(1.0, shape.ranksPerCpu) * 2 * static_cast<double>(shape.ranks - 1);
  size_t slice = kMinPieceBytes;
  while (2 * slice <= shape.pieceLimit && 2 * static_cast<double>(slice) * slicesPerCpu <= cache) {
    slice *= 2;
  }
  return std::min(slice, shape.pieceLimit);
}

size_t pipelinePieceBytes(OpKind kind, ScheduleId id, const CallShape& shape,
                          const CostModel& model, size_t maxBytes) {
  // The double tree's pieces and two-shot's slices are sized to stay in cache, not timed.
  if (kind == OpKind::kAllReduce && (id == ScheduleId::kTree || id == ScheduleId::kTwoShot)) {
    const size_t cacheSized =
        id == ScheduleId::kTree ? treeAllReducePieceBytes(shape) : twoShotSliceBytes(shape);
    return std::min(cacheSized, std::max(maxBytes, kMinPieceBytes));
  }
  const std::optional<Pipeline> p = pipelineOf(kind, id, shape, withSharedCpuWakeUps(model, shape));
  if (!p) return 0;
  const double s = static_cast<double>(std::max<size_t>(shape.bytes, 1));
  // One hop (or none) pipelines nothing: the largest pieces waste the fewest messages.
  const double best =
      p->depth <= 1 ? s : std::sqrt(s * p->alphaUs / (p->usPerByte * (p->depth - 1)));
  constexpr double kGranule = 4096;  // whole pages: tidy pieces, and no odd element tails
  const double rounded = std::floor(best / kGranule) * kGranule;
  const double upper = static_cast<double>(std::max(maxBytes, kMinPieceBytes));
  return static_cast<size_t>(std::clamp(rounded, static_cast<double>(kMinPieceBytes), upper));
}

}  // namespace hoop
