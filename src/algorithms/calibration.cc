#include "algorithms/calibration.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "algorithms/primitives.h"
#include "algorithms/tuner.h"
#include "core/communicator.h"
#include "core/logging.h"
#include "device/cpu/reduce.h"

namespace hoop {
namespace {

constexpr int kWarmUpSteps = 2;  // the reduction's; a ring step's depends on the slots
constexpr int kBatches = 6;
constexpr int kLatencySteps = 8;  // per batch
constexpr int kBandwidthSteps = 2;
constexpr int kReduceRepeats = 8;
// Measurements whose figures cannot be the link's are taken again, at most this many in all.
constexpr uint32_t kAttempts = 3;
// The reduction is timed on buffers of this size: larger than a core's L2, as the reductions of
// large calls see (the in-cache rate overstated it 2-3x against whole-buffer reductions).
constexpr size_t kReduceBytes = 1 << 20;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// The time of one ring step of `bytes` (every rank sends to its successor and receives from its
// predecessor at once, as a ring schedule's steps do): the fastest batch's mean. A batch's mean
// is what a schedule's steps cost back to back, including the context switches of ranks that
// outnumber cores; a single step's time is not (a rank descheduled for one step lets the next
// ones find their data waiting: the median single step read 0.3 us where 4 ranks on 2 cores
// take 3-10 us a step). Other work only ever slows a batch down, and right after start the
// kernel may still have two ranks on one core (medians of 8 steps read 55-110 us for 0.2 and
// 8 us steps in one run of five): the fastest batch is the latency's figure.
double ringStepUs(Communicator& comm, Primitives& prims, const char* out, char* in, size_t bytes,
                  int stepsPerBatch) {
  const Ring& ring = comm.ring();
  // Warm up through every shm slot once: each one's first use faults its pages in, which cost
  // several times the step itself and would be measured as latency.
  const int warmUp = static_cast<int>(comm.config().shm.slots) + 2;
  for (int i = 0; i < warmUp; ++i) prims.sendRecv(ring.next(), out, bytes, ring.prev(), in, bytes);
  std::vector<double> batchMeans;
  for (int batch = 0; batch < kBatches; ++batch) {
    const auto start = Clock::now();
    for (int i = 0; i < stepsPerBatch; ++i) {
      prims.sendRecv(ring.next(), out, bytes, ring.prev(), in, bytes);
    }
    batchMeans.push_back(micros(Clock::now() - start) / stepsPerBatch);
  }
  return *std::min_element(batchMeans.begin(), batchMeans.end());
}

// Microseconds per output byte of a float32 sum.
double reduceUsPerByte() {
  const size_t count = kReduceBytes / sizeof(float);
  std::vector<float> a(count, 1.0f), b(count, 2.0f), out(count);
  std::vector<double> samples;
  for (int i = 0; i < kWarmUpSteps + kReduceRepeats; ++i) {
    const auto start = Clock::now();
    reduce(out.data(), a.data(), b.data(), count, DataType::kFloat32, RedOp::kSum);
    if (i >= kWarmUpSteps) samples.push_back(micros(Clock::now() - start));
  }
  return std::max(median(samples), 1e-3) / static_cast<double>(kReduceBytes);
}

// Figures where larger is slower, so that the slowest rank's are a plain maximum.
struct Figures {
  double alphaUs;
  double usPerByte;
  double reduceUsPerByte;
};

// One measurement of the link: this rank's figures, then the slowest rank's of each, passed once
// around the ring (after n-1 steps every rank holds everyone's). `attempt` keeps each one's
// frames apart.
Figures measureAndAgree(Communicator& comm, double myReduceUsPerByte, uint32_t attempt) {
  Figures mine{};
  mine.reduceUsPerByte = myReduceUsPerByte;
  std::vector<char> out(kLinkStepBytes, 1), in(kLinkStepBytes);
  {
    Primitives prims(comm, FrameTag{OpKind::kSetup, 1 + 2 * attempt}, DataType::kInt8, RedOp::kSum,
                     0);
    mine.alphaUs = ringStepUs(comm, prims, out.data(), in.data(), 8, kLatencySteps);
    const double bulkUs =
        ringStepUs(comm, prims, out.data(), in.data(), kLinkStepBytes, kBandwidthSteps);
    mine.usPerByte = std::max(bulkUs - mine.alphaUs, 1e-3) / static_cast<double>(kLinkStepBytes);
  }
  Figures agreed = mine;
  Primitives prims(comm, FrameTag{OpKind::kSetup, 2 + 2 * attempt}, DataType::kInt8, RedOp::kSum,
                   0);
  const Ring& ring = comm.ring();
  for (size_t step = 1; step < ring.size(); ++step) {
    Figures sent = agreed, received{};
    prims.sendRecv(ring.next(), &sent, sizeof(sent), ring.prev(), &received, sizeof(received));
    agreed.alphaUs = std::max(agreed.alphaUs, received.alphaUs);
    agreed.usPerByte = std::max(agreed.usPerByte, received.usPerByte);
    agreed.reduceUsPerByte = std::max(agreed.reduceUsPerByte, received.reduceUsPerByte);
  }
  prims.finish();
  return agreed;
}

// Why agreed shm figures cannot be the link's, or null when they can be. TCP figures are kept
// as read: a fast network's latency may rightly be a large share of a 256 KiB step.
const char* implausibility(const Figures& agreed, bool overShm, double spinUs) {
  if (!overShm) return nullptr;
  // A shm step that lasts about the spin budget is the signature of two ranks on one core (the
  // waiting rank spins on the core its peer needs, then yields): right after start, in 2 of 5
  // runs at 2 ranks here, steps read 53 us for 0.2 us, while the job's collectives then ran at
  // full speed. That figure is the scheduler's, not the link's.
  if (stepShowsSharedCore(agreed.alphaUs, spinUs)) {
    return "about the spin budget: two ranks shared a core";
  }
  const double bulkUs = agreed.alphaUs + agreed.usPerByte * static_cast<double>(kLinkStepBytes);
  if (!stepsConsistent(agreed.alphaUs, bulkUs)) {
    return "too long against the 256 KiB step's: the small steps ran in a slower period";
  }
  return nullptr;
}

}  // namespace

void calibrateCostModel(Communicator& comm) {
  CostModel model = comm.config().costModel;
  if (!model.calibrate || comm.size() < 2) return;

  const bool overShm = comm.everyPeerOverShm();
  const double spinUs = static_cast<double>(comm.config().spinBeforeSleep.count());
  const double myReduceUsPerByte = reduceUsPerByte();
  // Every rank holds the same agreed figures, so every rank takes the same branch here.
  Figures agreed{};
  bool adopted = false;
  for (uint32_t attempt = 0; attempt < kAttempts && !adopted; ++attempt) {
    agreed = measureAndAgree(comm, myReduceUsPerByte, attempt);
    if (const char* why = implausibility(agreed, overShm, spinUs)) {
      log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), "calibration attempt ", attempt + 1,
          " of ", kAttempts, " read ", agreed.alphaUs, " us per shm step, ", why,
          attempt + 1 < kAttempts ? "; measuring again" : "; keeping the defaults");
    } else {
      adopted = true;
    }
  }

  // The ring's slowest hop sets a flat schedule's pace: shared memory on a single-host shm job,
  // else the network.
  const bool linkFromEnv = overShm ? model.shmFromEnv : model.tcpFromEnv;
  LinkCost& link = overShm ? model.shm : model.tcp;
  if (!linkFromEnv && adopted) {
    link = {agreed.alphaUs, 1 / agreed.usPerByte};
    // An eager handshake costs what an 8-byte ring step does (measured alike at 2 ranks, and
    // both grow alike when ranks outnumber cores).
    if (overShm) model.eagerAlphaUs = agreed.alphaUs;
  }
  // The reduction is timed on this rank's own buffers, apart from the links: always adopted.
  if (!model.reduceFromEnv) model.reduceBytesPerUs = 1 / agreed.reduceUsPerByte;
  comm.adoptCostModel(model);
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(),
      "cost model calibrated (slowest rank): ", overShm ? "shm" : "tcp", " ", link.alphaUs,
      " us + ", link.bytesPerUs / 1e3, " GB/s per step",
      linkFromEnv ? " (from the environment)"
      : adopted   ? ""
                  : " (the defaults, kept)",
      "; reduction ", model.reduceBytesPerUs / 1e3, " GB/s",
      model.reduceFromEnv ? " (from the environment)" : "",
      "; HOOP_TUNE_CALIBRATE=0 keeps the defaults");
}

bool stepsConsistent(double smallStepUs, double bulkStepUs) {
  return bulkStepUs >= kMinBulkOverSmallStep * smallStepUs;
}

bool stepShowsSharedCore(double stepUs, double spinUs) {
  return spinUs > 0 && stepUs > 0.8 * spinUs && stepUs < 2 * spinUs;
}

}  // namespace hoop
