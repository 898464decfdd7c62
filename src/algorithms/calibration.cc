#include "algorithms/calibration.h"

#include <sched.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "algorithms/primitives.h"
#include "algorithms/team.h"
#include "algorithms/tuner.h"
#include "base/clock.h"
#include "base/logging.h"
#include "base/median.h"
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
// Before the second attempt; the third waits twice as long.
constexpr std::chrono::milliseconds kPauseBeforeAgain{2};
// The reduction is timed on buffers of this size: larger than a core's L2, as the reductions of
// large calls see (the in-cache rate overstates it against whole-buffer reductions; docs/tuner.md).
constexpr size_t kReduceBytes = 1 << 20;

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// The time of one ring step of `bytes` (every rank sends to its successor and receives from its
// predecessor at once, as a ring schedule's steps do): the fastest batch's mean. A batch's mean
// is what a schedule's steps cost back to back, including the context switches of ranks that
// outnumber cores; a single step's time is not (a rank descheduled for one step lets the next
// ones find their data waiting, so the median single step reads far below what a step costs
// where ranks outnumber cores). Other work only ever slows a batch down, and right after start
// the kernel may still have two ranks on one core (a batch's median then reads many times the
// step): the fastest batch is the latency's figure.
double ringStepUs(Team& comm, Primitives& prims, const char* out, char* in, size_t bytes,
                  int stepsPerBatch) {
  const Ring& ring = comm.ring();
  // Warm up through every shm slot once: each one's first use faults its pages in, which cost
  // several times the step itself and would be measured as latency.
  const int warmUp = static_cast<int>(comm.shmSlots()) + 2;
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
  return std::max(medianOf(samples), 1e-3) / static_cast<double>(kReduceBytes);
}

// Figures where larger is slower, so that the slowest rank's are a plain maximum.
struct Figures {
  double alphaUs;
  double usPerByte;
  double reduceUsPerByte;
};

Figures slowerOfEach(const Figures& a, const Figures& b) {
  return {std::max(a.alphaUs, b.alphaUs), std::max(a.usPerByte, b.usPerByte),
          std::max(a.reduceUsPerByte, b.reduceUsPerByte)};
}

// One measurement of the links, as every rank holds it afterwards.
struct Measurement {
  Figures slowest;                 // the slowest rank's of each figure
  std::vector<TimingSpans> spans;  // by rank
};

// What passes from rank to rank once around the ring: the slowest figures so far, and one
// rank's CPU spans, forwarded until every rank has seen every rank's. No padding: it goes as
// bytes.
struct Relay {
  Figures slowest;
  TimingSpans spans;
  int32_t rank;
  int32_t unused = 0;
};
static_assert(sizeof(Relay) == sizeof(Figures) + sizeof(TimingSpans) + 2 * sizeof(int32_t));

// One measurement: this rank's figures, then everyone's, passed once around the ring (after
// n-1 steps every rank holds the same). `attempt` keeps each one's frames apart.
Measurement measureAndAgree(Team& comm, double myReduceUsPerByte, uint32_t attempt) {
  Figures mine{};
  mine.reduceUsPerByte = myReduceUsPerByte;
  TimingSpans where;
  std::vector<char> out(kLinkStepBytes, 1), in(kLinkStepBytes);
  {
    Primitives prims(comm, FrameTag{OpKind::kSetup, 1 + 2 * attempt}, DataType::kInt8, RedOp::kSum,
                     0);
    where.latency.first = sched_getcpu();
    mine.alphaUs = ringStepUs(comm, prims, out.data(), in.data(), 8, kLatencySteps);
    where.latency.last = sched_getcpu();
    where.bulk.first = where.latency.last;
    const double bulkUs =
        ringStepUs(comm, prims, out.data(), in.data(), kLinkStepBytes, kBandwidthSteps);
    where.bulk.last = sched_getcpu();
    mine.usPerByte = std::max(bulkUs - mine.alphaUs, 1e-3) / static_cast<double>(kLinkStepBytes);
  }
  const int n = comm.size();
  Measurement measured{mine, std::vector<TimingSpans>(static_cast<size_t>(n))};
  measured.spans[static_cast<size_t>(comm.rank())] = where;
  Primitives prims(comm, FrameTag{OpKind::kSetup, 2 + 2 * attempt}, DataType::kInt8, RedOp::kSum,
                   0);
  const Ring& ring = comm.ring();
  Relay forward{mine, where, comm.rank()};
  for (size_t step = 1; step < ring.size(); ++step) {
    Relay received{};
    prims.sendRecv(ring.next(), &forward, sizeof(forward), ring.prev(), &received,
                   sizeof(received));
    if (received.rank < 0 || received.rank >= n) {
      fail(hoopRemoteError, "rank ", comm.rank(), ": calibration figures from ",
           comm.describePeer(ring.prev()), " name rank ", received.rank, " of ", n);
    }
    measured.slowest = slowerOfEach(measured.slowest, received.slowest);
    measured.spans[static_cast<size_t>(received.rank)] = received.spans;
    forward = {measured.slowest, received.spans, received.rank};
  }
  prims.finish();
  return measured;
}

// Whether two ranks of one host stayed on one CPU through a timing where the hosts have a CPU
// for each rank (ranksStayedOnOneCpu).
bool ranksStacked(const Team& comm, const Measurement& measured) {
  if (comm.ranksPerCpu() > 1) return false;
  std::vector<uint64_t> hostIds;
  for (int r = 0; r < comm.size(); ++r) hostIds.push_back(comm.peerHostId(r));
  return ranksStayedOnOneCpu(measured.spans, hostIds);
}

// Why shm figures cannot be the link's, or null when they can be. TCP figures are kept as read:
// a fast network's latency may rightly be a large share of a 256 KiB step.
const char* inconsistency(const Figures& f, bool overShm) {
  if (!overShm) return nullptr;
  const double bulkUs = f.alphaUs + f.usPerByte * static_cast<double>(kLinkStepBytes);
  if (!stepsConsistent(f.alphaUs, bulkUs)) {
    return "too long against the 256 KiB step's: the small steps ran in a slower period";
  }
  return nullptr;
}

}  // namespace

CalibrationOutcome calibrateCostModel(Team& comm) {
  CalibrationOutcome outcome;
  CostModel model = comm.costModel();
  if (!model.calibrate || comm.size() < 2) return outcome;

  const bool overShm = comm.everyPeerSharesMemory();
  const double myReduceUsPerByte = reduceUsPerByte();
  // Every rank holds the same measurement, so every rank takes the same branch here.
  Figures agreed{};
  for (uint32_t attempt = 0; attempt < kAttempts; ++attempt) {
    const Measurement measured = measureAndAgree(comm, myReduceUsPerByte, attempt);
    agreed = measured.slowest;
    const bool again = attempt + 1 < kAttempts;
    // Ranks still stacked at the last attempt, after the pauses, are how this job runs: where
    // they stayed so, the collectives ran stacked too, and the schedules their figures pick were
    // as fast as the defaults' or faster. So only earlier attempts are set aside.
    const bool stacked = ranksStacked(comm, measured);
    const char* why = stacked && again ? "two ranks of one host stayed on one CPU (the kernel had "
                                         "not spread them yet)"
                                       : inconsistency(agreed, overShm);
    if (why == nullptr) {
      outcome.adopted = true;
      if (stacked) {
        log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), "two ranks of one host still share a ",
            "CPU after ", kAttempts, " measurements: figures taken as this job runs");
      }
      break;
    }
    outcome.setAside.push_back(str("calibration attempt ", attempt + 1, " of ", kAttempts, " read ",
                                   agreed.alphaUs, " us per ", overShm ? "shm" : "tcp",
                                   " step: ", why));
    log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(), outcome.setAside.back(),
        again ? "; measuring again" : "; keeping the defaults");
    // A rank that sleeps is placed afresh when it wakes, on an idle CPU where there is one: a
    // short sleep lets ranks stacked on one CPU spread before the next attempt.
    if (again) std::this_thread::sleep_for(kPauseBeforeAgain * (attempt + 1));
  }

  // The ring's slowest hop sets a flat schedule's pace: shared memory on a single-host shm job,
  // else the network.
  const bool linkFromEnv = overShm ? model.shmFromEnv : model.tcpFromEnv;
  LinkCost& link = overShm ? model.shm : model.tcp;
  // Snapped, so that run-to-run noise of the same machine moves the model rarely (snapToGrid).
  if (!linkFromEnv && outcome.adopted) {
    link = {snapToGrid(agreed.alphaUs), snapToGrid(1 / agreed.usPerByte)};
    // An eager handshake costs what an 8-byte ring step does (measured alike at 2 ranks, and
    // both grow alike when ranks outnumber cores).
    if (overShm) {
      model.eagerAlphaUs = link.alphaUs;
      model.shmLatencyMeasured = true;
    }
  }
  // The reduction is timed on this rank's own buffers, apart from the links: always adopted.
  if (!model.reduceFromEnv) model.reduceBytesPerUs = snapToGrid(1 / agreed.reduceUsPerByte);
  comm.adoptCostModel(model);
  log(LogLevel::kInfo, LogSubsys::kTune, comm.rank(),
      "cost model calibrated (slowest rank): ", overShm ? "shm" : "tcp", " ", link.alphaUs,
      " us + ", link.bytesPerUs / 1e3, " GB/s per step",
      linkFromEnv       ? " (from the environment)"
      : outcome.adopted ? ""
                        : " (the defaults, kept)",
      "; reduction ", model.reduceBytesPerUs / 1e3, " GB/s",
      model.reduceFromEnv ? " (from the environment)" : "",
      "; measured figures snapped to powers of two; HOOP_TUNE_CALIBRATE=0 keeps the defaults");
  return outcome;
}

double snapToGrid(double figure) { return std::exp2(std::round(std::log2(figure))); }

bool stepsConsistent(double smallStepUs, double bulkStepUs) {
  return bulkStepUs >= kMinBulkOverSmallStep * smallStepUs;
}

bool ranksStayedOnOneCpu(std::span<const TimingSpans> spans, std::span<const uint64_t> hostIds) {
  for (CpuSpan TimingSpans::*timing : {&TimingSpans::latency, &TimingSpans::bulk}) {
    std::set<std::pair<uint64_t, int32_t>> taken;  // (host, CPU) of the ranks that stayed put
    for (size_t r = 0; r < spans.size(); ++r) {
      const CpuSpan& span = spans[r].*timing;
      if (span.first < 0 || span.first != span.last) continue;
      if (!taken.emplace(hostIds[r], span.first).second) return true;
    }
  }
  return false;
}

}  // namespace hoop
