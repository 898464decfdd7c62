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
  model.calibrate = envInt("HOOP_TUNE_CALIBRATE", 1) != 0;
  model.trial = envInt("HOOP_TUNE_TRIAL", 1) != 0;
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
  shape.sharedMemory = comm.everyPeerOverShm();
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
// cost a share of a step's fixed work. Over shared memory that is a slot header, which measured
// as nothing: at 4 ranks on 2 cores the direct allreduce's three messages at once took 0.65x
// recursive doubling's two rounds, and two-shot's two steps of three 0.8x, from 8 B to 2 KiB.
// Over TCP it is a system call on each side, which the CPU does one after another: all of it
// (the direct allreduce's three messages at once took 1.5-1.9x recursive doubling's two rounds).
double extraMessageShare(const CallShape& shape) { return overNetwork(shape) ? 1.0 : 0.0; }

// Whether the ranks of a single-host job have CPUs to spare: at least two CPUs a rank, none
// bound to fewer. There the loopback copies of different ranks run at once and bytes cost what
// they cost, where ranks that share CPUs (4 on 2 here) take turns and what counts is keeping
// pieces in cache and waking ranks seldom: the double tree's trade. On 16 CPUs, 4 ranks over
// TCP from 2 to 32 MiB, the tree took 0.94-1.22x the ring's time and two-shot 0.75-0.93x, where
// on 2 CPUs the tree took 0.58-0.64x and two-shot 0.9-2.0x (bench/RESULTS.md, twenty-first and
// fifteenth passes).
bool cpusToSpare(const CallShape& shape) { return shape.hosts == 1 && shape.ranksPerCpu <= 0.5; }

// Whether two-shot's pieces of S/n pass its slice (the chunk size over TCP), so it runs in
// several rounds.
bool twoShotSliced(const CallShape& shape) {
  const double piece = static_cast<double>(shape.bytes) / static_cast<double>(shape.ranks);
  return piece > static_cast<double>(twoShotSliceBytes(shape));
}

// Over TCP where ranks share CPUs, two-shot's slices are priced as the ring, which it ties and
// follows in the model's order, so the schedule trial times the two: sliced, it read 0.8-1.1x the
// double tree's time at 4 ranks on 2 CPUs from 1 to 32 MiB (level, within that host's noise),
// and from 8 MiB it was the fastest schedule in some tables (0.83x the ring's time at 8 MiB),
// while at 128 MiB it took 1.3-1.5x the ring's (bench/RESULTS.md, twenty-fourth and
// twenty-fifth passes). At two ranks it is the ring, message for message: over TCP with reno
// sockets it took 0.8-0.9x the ring's time from 8 to 128 MiB on 2 CPUs (twenty-third pass).
// Between hosts it is priced only in one round (unmeasured there in slices).
bool twoShotPriced(const CallShape& shape) {
  return !overNetwork(shape) || shape.hosts == 1 || shape.ranks <= 2 || !twoShotSliced(shape);
}

// The two-shot allreduce's byte terms against the ring's.
// - Two ranks: one message each way per step; it is the ring.
// - Over TCP its streams at once keep the connections busier: 0.55-0.8x the ring's time at
//   512 KiB to 2 MiB at 4 ranks on 2 CPUs. Sliced, where ranks have CPUs to spare
//   (cpusToSpare), 0.75-0.93x the ring's from 2 to 32 MiB at 4 ranks on 16 CPUs: 0.8; where
//   they share CPUs, the ring's (twoShotPriced).
// - Over shm, in slices that stay in the level-2 cache (twoShotSliceBytes), from 4 ranks on:
//   the ring's 2(n-1) steps move in lockstep, where two-shot's n-1 messages of a step land in
//   any order. On 2 cores it read 0.56-0.90x the ring's time at 4 ranks from 512 KiB to
//   256 MiB (eighth pass), and from 4 to 16 MiB medians of 0.79-1.05x at 5 ranks, 0.76-0.91x at
//   6 and 0.56-0.73x at 8 (tenth pass, slices by the cache rule). Not modelled: at 8 ranks the
//   ring stayed ahead from 512 KiB to 2 MiB (1.1-1.8x), where two-shot's 16 KiB slices make
//   many short rounds. At 3 ranks, two steps against four, it was level with the ring
//   (1.0-1.2x): the ring and the tree keep the large sizes.
double twoShotByteFactor(const CallShape& shape) {
  if (shape.ranks <= 2) return 1.0;
  if (overNetwork(shape)) {
    if (cpusToSpare(shape)) return 0.8;
    return twoShotSliced(shape) ? 1.0 : 0.75;
  }
  return shape.ranks >= 4 ? 0.8 : 1.05;
}

// Rabenseifner moves the ring's bytes, but each piece's exchange finishes before the next
// starts, where the ring's pieces overlap: 1.2-1.7x the ring's time from 8 MiB up at 4 ranks on
// both links, 1.4x at 32 MiB on 2.
constexpr double kRabenseifnerByteFactor = 1.3;

bool hierarchical(const CallShape& shape) { return shape.ranksPerHost >= 2 && shape.hosts >= 2; }

double log2Ceil(size_t n) { return std::ceil(std::log2(static_cast<double>(n))); }

// A pipeline: how many hops the last piece travels, what a piece-step costs per message and per
// byte (a node that sends each piece to two children pays its bytes twice).
struct Pipeline {
  double depth;
  double alphaUs;
  double usPerByte;
};

std::optional<Pipeline> pipelineOf(OpKind kind, std::string_view name, const CallShape& shape,
                                   const CostModel& model) {
  const bool reducing = kind == OpKind::kReduce;
  if (kind != OpKind::kBroadcast && !reducing) return std::nullopt;
  const double n = static_cast<double>(shape.ranks);
  const double reduceUsPerByte = reducing ? 1 / model.reduceBytesPerUs : 0;
  const LinkCost& link = flatLink(shape, model);
  if (name == "ring") {
    return Pipeline{n - 1, link.alphaUs, 1 / link.bytesPerUs + reduceUsPerByte};
  }
  if (name == "tree") {
    // A binary tree over n ranks is floor(log2 n) hops deep; inner nodes serve two children.
    const double depth = std::floor(std::log2(n));
    return Pipeline{depth, link.alphaUs, 2 * (1 / link.bytesPerUs + reduceUsPerByte)};
  }
  if (name == "hierarchical" && !reducing && hierarchical(shape)) {
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
              kRabenseifnerByteFactor *
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

// What each double tree piece beyond the first adds, in steps (doubleTreeUs says why).
constexpr double kTreeStepsPerExtraPiece = 0.1;

// Two binary trees, each carrying half the buffer up to its root and back down, piece by piece,
// piece k+1 going up while piece k comes down: a pipeline 2 floor(log2 n) hops deep. Fitted to
// the forced sweeps at 4 ranks on 2 cores (bench/RESULTS.md):
// - A hop is one message one way, where a ring step sends and receives: 0.6 of a calibrated
//   step over TCP, 0.75 over shm. Over TCP at 4 ranks, 8 B to 2 KiB, 4 hops took 0.95-1.22x
//   what recursive doubling's 2 rounds did in the second to fifteenth passes and 1.6-2.5x in
//   the sixteenth; half a step tied them and the tree's smaller byte term gave it every size,
//   while 0.6 leaves them to recursive doubling (at most 1.06x behind there) and hands
//   over at 64-128 KiB, where the two were level in the seventh and sixteenth passes.
//   At 2 ranks both trees are one exchange: the ring's step, and the ring's bytes.
// - Each further piece adds a tenth of a step: its latency hides behind the others' bytes.
// - Bytes: each rank forwards about twice the ring's, but both trees' pieces move at once and
//   stay in cache: 0.65-0.9x the ring's time from 2 MiB to 32 MiB, 0.7x over TCP. Over shm a
//   tree of few pieces has little to overlap, and its hops run one after another: 1.35x the
//   ring's bytes with two pieces a half (512 KiB), against two-shot's 1.0 (1.1-1.35x slower in
//   every run); the pipeline's fill, (hops - 1) / (2 pieces), says so. Over TCP the kernel's
//   copies overlap anyway: the tree led from 32 KiB to 512 KiB with one piece a half.
double doubleTreeUs(const CallShape& shape, const CostModel& model) {
  const double pieces = piecesOf(static_cast<double>(shape.bytes) / 2,
                                 static_cast<double>(treeAllReducePieceBytes(shape)));
  const double hops = 2 * std::floor(std::log2(static_cast<double>(shape.ranks)));
  const bool two = shape.ranks == 2;
  const double hopShare = two ? 1.0 : overNetwork(shape) ? 0.6 : 0.75;
  // Where ranks have CPUs to spare, the tree's extra bytes count over TCP (cpusToSpare).
  const double byteFactor = two                  ? 1.0
                            : overNetwork(shape) ? (cpusToSpare(shape) ? 1.1 : 0.7)
                                                 : 0.8 * (1 + (hops - 1) / (2 * pieces));
  return (hops * hopShare + (pieces - 1) * kTreeStepsPerExtraPiece) *
             flatLink(shape, model).alphaUs +
         byteFactor * ringBytesUs(shape, model);
}

// Two ranks over TCP: every schedule is a run of exchanges with the one peer, both sending and
// receiving at once: the step calibration times. An exchange's cost is not linear in its bytes
// there: a receiver copies a segment out only once the sender has copied it in, so each exchange
// also pays its first kTcpFillBytes once more before the two copies overlap. Fitted to forced
// sweeps at 2 ranks (bench/RESULTS.md, sixth pass): the ring's steps of 32 KiB to 512 KiB took
// about 17, 30, 45, 65 and 105 us, calibration 7 us for 8 B and 4.3 GB/s at 256 KiB: bytes at
// 1.5x the rate the 256 KiB step reads as, and the first 128 KiB twice (17, 27, 47, 68, 108). One
// exchange of 512 KiB (recursive doubling) took 125 us where the ring's two of 256 KiB took 148,
// in each of four sweeps (1.12-1.27x), which the linear model had the other way round. At
// more ranks steps overlap across peers and ranks share cores here; the fitted factors above
// stand for that, and the fill is not separated from them.
constexpr double kTcpFillBytes = 128 << 10;

// The calibrated rate is a kLinkStepBytes exchange's, fill included: the fill taken back out.
double tcpStreamingUsPerByte(const LinkCost& link) {
  const double stepBytes = static_cast<double>(kLinkStepBytes);
  return stepBytes / (stepBytes + kTcpFillBytes) / link.bytesPerUs;
}

double tcpExchangeUs(const LinkCost& link, double bytes) {
  return link.alphaUs + (bytes + std::min(bytes, kTcpFillBytes)) * tcpStreamingUsPerByte(link);
}

std::optional<double> pairOverTcpUs(std::string_view name, const CallShape& shape,
                                    const CostModel& model) {
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
  if (name == "ring") return ringUs;
  if (name == "twoshot") return twoShotPriced(shape) ? std::optional<double>(ringUs) : std::nullopt;
  if (name == "tree") {
    const double pieces = piecesOf(s / 2, static_cast<double>(treeAllReducePieceBytes(shape)));
    return ringUs + (pieces - 1) * kTreeStepsPerExtraPiece * link.alphaUs;
  }
  if (name == "recdoubling") {
    // The whole buffer once each way, piece after piece (each waits for the one before).
    const double pieces = piecesOf(s, limit);
    return pieces * tcpExchangeUs(link, s / pieces) + s / r;
  }
  // One exchange of the whole buffer and one fold, the own input read where it lies: recursive
  // doubling's price up to one piece, less above it. With at most 128 KiB unsent in a socket it
  // was the fastest forced schedule at 1 and 2 MiB on 2 CPUs (0.84x two-shot's time at 2 MiB;
  // bench/RESULTS.md, twenty-ninth pass), and two-shot from 4 MiB.
  if (name == "direct") return tcpExchangeUs(link, s) + s / r;
  return std::nullopt;  // the general formulas below
}

std::optional<double> allReduceUs(std::string_view name, const CallShape& shape,
                                  const CostModel& model) {
  if (shape.ranks == 2 && overNetwork(shape)) {
    if (auto us = pairOverTcpUs(name, shape, model)) return us;
  }
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const double r = model.reduceBytesPerUs;
  const LinkCost& link = flatLink(shape, model);
  if (name == "ring") {
    // 2(n-1) steps of S/n each: the bandwidth-optimal volume, the most steps.
    return 2 * (n - 1) * link.alphaUs + ringBytesUs(shape, model);
  }
  if (name == "direct") {
    // One step, but every rank sends and reduces (n-1) whole buffers. Over shm each is copied
    // out of its slot first (the ring reduces straight out of one); a TCP receive lands in place.
    // From 3 ranks, in place, ranks from 2 on also copy their own input beside the others' (the
    // fold writes over it before it would read it), and the slowest rank sets the time.
    const double passes = overNetwork(shape) ? 1 : 2;
    const double ownCopy = shape.ranks > 2 ? s / r : 0;
    return link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) + (n - 1) * s / link.bytesPerUs +
           passes * (n - 1) * s / r + ownCopy;
  }
  if (name == "twoshot") {
    if (!twoShotPriced(shape)) return std::nullopt;  // forced, it still runs
    // Two steps, each posting n-1 messages of S/n at once; the ring's volume, and the owner
    // folds n copies of its piece (twoShotByteFactor: how those bytes move against the ring's).
    return 2 * link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) +
           twoShotByteFactor(shape) * ringBytesUs(shape, model);
  }
  if (name == "oneshot") {
    // One eager handshake per peer; each rank copies its input into every peer's eager buffer
    // and reduces the peers' inputs where they lie: memory passes, at about the kernel's rate.
    return model.eagerAlphaUs + 2 * (n - 1) * s / r;
  }
  if (name == "hierarchical") {
    if (!hierarchical(shape)) return std::nullopt;
    const double l = static_cast<double>(shape.ranksPerHost);
    const double h = static_cast<double>(shape.hosts);
    const double within = 2 * (l - 1) * model.shm.alphaUs +
                          2 * (l - 1) / l * s / model.shm.bytesPerUs + (l - 1) / l * s / r;
    const double piece = s / l;
    const double across = 2 * (h - 1) * model.tcp.alphaUs +
                          2 * (h - 1) / h * piece / model.tcp.bytesPerUs + (h - 1) / h * piece / r;
    return within + across;
  }
  if (name == "recdoubling") {
    // log2 rounds of the whole buffer; a non-power of two folds in and out (two more steps).
    const bool powerOfTwo = (shape.ranks & (shape.ranks - 1)) == 0;
    const double rounds = std::floor(std::log2(n)) + (powerOfTwo ? 0 : 2);
    // Each round's data is combined where it arrives (a shm slot, or the staging buffer a TCP
    // receive lands in).
    return rounds * (link.alphaUs + s / link.bytesPerUs + s / r);
  }
  if (name == "rabenseifner") return rabenseifnerUs(shape, model);
  if (name == "tree") return doubleTreeUs(shape, model);
  return std::nullopt;
}

std::optional<double> allGatherUs(std::string_view name, const CallShape& shape,
                                  const CostModel& model) {
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const LinkCost& link = flatLink(shape, model);
  if (name == "ring") return (n - 1) * (link.alphaUs + s / n / link.bytesPerUs);
  if (name == "bruck") {
    // ceil(log2 n) rounds moving the ring's bytes in all, then one local rotation of the output
    // (a copy, at about the reduction kernel's rate).
    return log2Ceil(shape.ranks) * link.alphaUs + (n - 1) / n * s / link.bytesPerUs +
           s / model.reduceBytesPerUs;
  }
  if (name == "hierarchical") {
    if (!hierarchical(shape)) return std::nullopt;
    const double l = static_cast<double>(shape.ranksPerHost);
    const double h = static_cast<double>(shape.hosts);
    return (h - 1) * (model.tcp.alphaUs + s / n / model.tcp.bytesPerUs) +
           (l - 1) * (model.shm.alphaUs + s / l / model.shm.bytesPerUs);
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> predictUs(OpKind kind, std::string_view name, const CallShape& shape,
                                const CostModel& model, size_t pieceBytes) {
  if (shape.ranks <= 1) return 0.0;
  switch (kind) {
    case OpKind::kAllReduce: return allReduceUs(name, shape, model);
    case OpKind::kAllGather: return allGatherUs(name, shape, model);
    case OpKind::kBroadcast:
    case OpKind::kReduce: {
      const std::optional<Pipeline> p = pipelineOf(kind, name, shape, model);
      if (!p) return std::nullopt;
      const size_t piece =
          pieceBytes != 0 ? pieceBytes : pipelinePieceBytes(kind, name, shape, model, SIZE_MAX);
      return pipelineUs(*p, static_cast<double>(shape.bytes), static_cast<double>(piece));
    }
    default: return std::nullopt;
  }
}

size_t treeAllReducePieceBytes(const CallShape& shape) {
  return std::min(overNetwork(shape) ? size_t{256} << 10 : size_t{128} << 10, shape.pieceLimit);
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

size_t pipelinePieceBytes(OpKind kind, std::string_view name, const CallShape& shape,
                          const CostModel& model, size_t maxBytes) {
  // The double tree's pieces and two-shot's slices are sized to stay in cache, not timed.
  if (kind == OpKind::kAllReduce && (name == "tree" || name == "twoshot")) {
    const size_t cacheSized =
        name == "tree" ? treeAllReducePieceBytes(shape) : twoShotSliceBytes(shape);
    return std::min(cacheSized, std::max(maxBytes, kMinPieceBytes));
  }
  const std::optional<Pipeline> p = pipelineOf(kind, name, shape, model);
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
