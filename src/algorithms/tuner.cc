#include "algorithms/tuner.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "algorithms/collective.h"
#include "core/communicator.h"
#include "core/env.h"
#include "core/error.h"

namespace hoop {
namespace {

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

CallShape callShape(const Communicator& comm, const CollectiveArgs& args) {
  CallShape shape;
  const bool perRank = args.kind == OpKind::kAllGather;
  shape.bytes = args.bytes() * (perRank ? static_cast<size_t>(comm.size()) : 1);
  shape.ranks = static_cast<size_t>(comm.size());
  shape.hosts = static_cast<size_t>(comm.hostCount());
  shape.ranksPerHost = comm.localRing().size();
  shape.sharedMemory = comm.everyPeerOverShm();
  shape.pieceLimit = comm.config().chunkBytes;
  return shape;
}

namespace {

// A flat schedule's slowest link: the network as soon as it spans hosts.
const LinkCost& flatLink(const CallShape& shape, const CostModel& model) {
  return shape.hosts > 1 || !shape.sharedMemory ? model.tcp : model.shm;
}

// Messages posted together overlap their latencies, but each one beyond the first still costs a
// share of a step's fixed work. Over shared memory that is a slot header and a wake-up: a
// quarter. Over TCP it is a system call on each side, which the CPU does one after another:
// all of it (measured at 4 ranks: the direct allreduce's three messages at once took 1.7-1.9x
// recursive doubling's two rounds, from 8 B to 32 KiB).
double extraMessageShare(const CallShape& shape) {
  return shape.hosts > 1 || !shape.sharedMemory ? 1.0 : 0.25;
}

// The two-shot allreduce's byte terms against the ring's. Over shm its n-1 streams at once move
// less smoothly than the ring's one neighbour at a time (the fold waits on each in turn):
// measured at 4 ranks on 2 cores, ahead of the ring up to 256 KiB and behind from 512 KiB. Over
// TCP the streams at once keep the connections busier: 0.55-0.8x the ring's time at 512 KiB to
// 2 MiB at 4 ranks.
double twoShotByteFactor(const CallShape& shape) {
  if (shape.ranks <= 2) return 1.0;  // one message each way per step: it is the ring
  return shape.hosts > 1 || !shape.sharedMemory ? 0.75 : 1.25;
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

double pipelineUs(const Pipeline& p, double bytes, double pieceBytes) {
  const double pieces = std::max(1.0, std::ceil(bytes / pieceBytes));
  const double piece = std::min(bytes, pieceBytes);
  return (pieces + p.depth - 1) * (p.alphaUs + piece * p.usPerByte);
}

std::optional<double> allReduceUs(std::string_view name, const CallShape& shape,
                                  const CostModel& model) {
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const double r = model.reduceBytesPerUs;
  const LinkCost& link = flatLink(shape, model);
  if (name == "ring") {
    // 2(n-1) steps of S/n each: the bandwidth-optimal volume, the most steps.
    return 2 * (n - 1) * link.alphaUs + 2 * (n - 1) / n * s / link.bytesPerUs + (n - 1) / n * s / r;
  }
  if (name == "direct") {
    // One step, but every rank sends and reduces (n-1) whole buffers, each copied out of the
    // connection first (the ring reduces straight out of a shm slot).
    return link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) + (n - 1) * s / link.bytesPerUs +
           2 * (n - 1) * s / r;
  }
  if (name == "twoshot") {
    // Its pieces (S/n) travel whole: past a slot they are staged and nothing pipelines, which
    // measured 2-2.75x slower than the ring from 2 MiB up at 4 ranks. Forced, it still runs.
    if (s / n > static_cast<double>(shape.pieceLimit)) return std::nullopt;
    // Two steps, each posting n-1 messages of S/n at once; the ring's volume, and the owner
    // folds n copies of its piece (twoShotByteFactor: how those bytes move against the ring's).
    return 2 * link.alphaUs * (1 + (n - 2) * extraMessageShare(shape)) +
           twoShotByteFactor(shape) * (2 * (n - 1) / n * s / link.bytesPerUs + (n - 1) / n * s / r);
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
    // Each round's data is copied out of the connection, then combined.
    return rounds * (link.alphaUs + s / link.bytesPerUs + 2 * s / r);
  }
  // rabenseifner and tree are left out until their pieces overlap (each piece's exchange now
  // finishes before the next starts), so the model would flatter them: HOOP_ALGO reaches them.
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

size_t pipelinePieceBytes(OpKind kind, std::string_view name, const CallShape& shape,
                          const CostModel& model, size_t maxBytes) {
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
