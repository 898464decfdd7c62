#include "algorithms/tuner.h"

#include <cmath>
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

// Messages posted together overlap their latencies; each one beyond the first still costs its
// sender and receiver some of a step's fixed work (the header, the wake-up).
constexpr double kConcurrentMessageShare = 0.25;

}  // namespace

CostModel CostModel::fromEnvironment() {
  CostModel model;
  model.shm = linkFromEnv("HOOP_TUNE_SHM", model.shm);
  model.tcp = linkFromEnv("HOOP_TUNE_TCP", model.tcp);
  if (auto text = envString("HOOP_TUNE_REDUCE")) {
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
  shape.bytes = args.bytes();
  shape.ranks = static_cast<size_t>(comm.size());
  shape.hosts = static_cast<size_t>(comm.hostCount());
  shape.ranksPerHost = comm.localRing().size();
  shape.sharedMemory = comm.everyPeerOverShm();
  return shape;
}

std::optional<double> predictAllReduceUs(std::string_view name, const CallShape& shape,
                                         const CostModel& model) {
  const double n = static_cast<double>(shape.ranks);
  const double s = static_cast<double>(shape.bytes);
  const double r = model.reduceBytesPerUs;
  // A flat schedule's slowest link: the network as soon as it spans hosts.
  const LinkCost& link = shape.hosts > 1 || !shape.sharedMemory ? model.tcp : model.shm;
  if (shape.ranks <= 1) return 0.0;
  if (name == "ring") {
    // 2(n-1) steps of S/n each: the bandwidth-optimal volume, the most steps.
    return 2 * (n - 1) * link.alphaUs + 2 * (n - 1) / n * s / link.bytesPerUs + (n - 1) / n * s / r;
  }
  if (name == "direct") {
    // One step, but every rank sends and reduces (n-1) whole buffers.
    return link.alphaUs + (n - 1) * s / link.bytesPerUs + (n - 1) * s / r;
  }
  if (name == "twoshot") {
    // Two steps, each posting n-1 messages of S/n at once; the ring's volume, so the ring's
    // bandwidth terms, and the owner folds n copies of its piece.
    return 2 * (link.alphaUs + (n - 2) * link.alphaUs * kConcurrentMessageShare) +
           2 * (n - 1) / n * s / link.bytesPerUs + (n - 1) / n * s / r;
  }
  if (name == "oneshot") {
    // One eager handshake per peer; the peers' inputs are read in place while reducing.
    return model.eagerAlphaUs + (n - 1) * s / model.shm.bytesPerUs + (n - 1) * s / r;
  }
  if (name == "hierarchical") {
    if (shape.ranksPerHost < 2 || shape.hosts < 2) return std::nullopt;
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
    return rounds * (link.alphaUs + s / link.bytesPerUs + s / r);
  }
  // rabenseifner and tree are left out until their pieces overlap (each piece's exchange now
  // finishes before the next starts), so the model would flatter them: HOOP_ALGO reaches them.
  return std::nullopt;
}

}  // namespace hoop
