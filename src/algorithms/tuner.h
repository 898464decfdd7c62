// hoop's own choice of schedule and pipeline piece size: an alpha-beta cost model. Each
// schedule's time is predicted from how many steps it takes (alpha: latency per message) and how
// many bytes each rank moves over its busiest link (beta: bytes per microsecond) and reduces (the
// CPU kernel's rate), for the link kinds the call crosses; the cheapest schedule that can serve
// the call wins. Pipelined schedules (chains and trees) also get the piece size that minimises
// their predicted time. Schedules are named by their id (schedule_id.h), never by a string.
//
// Every input is the same on every rank (the call, the communicator's shape, the model's
// parameters), so every rank picks the same schedule; by default it is also the same every run on
// the same machines: the parameters are the named defaults of cost_defaults.h (docs/tuner.md says
// where each came from). Explicit values replace the link figures: HOOP_TUNE_SHM="alpha_us,GB/s",
// HOOP_TUNE_TCP, HOOP_TUNE_REDUCE="GB/s"; HOOP_TUNE_CALIBRATE=1 measures them at init instead
// (calibration.h), snapped to powers of two, and every rank adopts the slowest rank's figures.
#pragma once

#include <cstddef>
#include <optional>

#include "algorithms/cost_defaults.h"
#include "algorithms/schedule_id.h"
#include "base/types.h"

namespace hoop {

class Team;
struct CollectiveArgs;

// The step size a link's bandwidth is measured on (calibration.h) and quoted for: one shm slot,
// a few TCP segments.
inline constexpr size_t kLinkStepBytes = 256 << 10;

// The figures a communicator prices schedules with: cost_defaults.h's, or what the environment
// or calibration put in their place.
struct CostModel {
  LinkCost shm = kCostDefaults.shm;
  LinkCost tcp = kCostDefaults.tcp;
  double eagerAlphaUs = kCostDefaults.eagerAlphaUs;
  double reduceBytesPerUs = kCostDefaults.reduceBytesPerUs;
  // Which fields the environment set: calibration leaves those alone.
  bool shmFromEnv = false;
  bool tcpFromEnv = false;
  bool reduceFromEnv = false;
  // Whether the shm latencies were read on this job's ranks (calibration) rather than defaults:
  // read where ranks share CPUs, they already hold the wake-ups sharedCpuWakeUpUs stands for.
  bool shmLatencyMeasured = false;
  // HOOP_TUNE_CALIBRATE (1: measure the links at init; off by default, as measured figures may
  // differ from run to run: docs/tuner.md).
  bool calibrate = false;
  // HOOP_TUNE_TRIAL (1: time close schedules on a size class's first calls; off by default, as
  // timing makes the choice, and so floating-point results, differ from run to run;
  // schedule_trial.h).
  bool trial = false;
  // HOOP_TUNE_WATCH: calls of a settled class between its checks for drift (0, the default: never;
  // else 32 at the least, the calls a check times; schedule_trial.h).
  size_t watchCalls = 0;

  // Defaults, with HOOP_TUNE_* overrides; a malformed value is hoopInvalidArgument naming it.
  static CostModel fromEnvironment();
};

// The shape of one call, as the model sees it.
struct CallShape {
  size_t bytes = 0;  // the whole buffer (for allgather: the whole output)
  size_t ranks = 1;
  size_t hosts = 1;
  size_t ranksPerHost = 1;    // 0 when hosts have different counts
  bool sharedMemory = false;  // every peer of a single-host job over shm
  // The largest message the schedules send whole (HOOP_CHUNK_SIZE: a shm slot by default).
  size_t pieceLimit = size_t{512} << 10;
  // The most ranks per CPU on any host (below 1: every host has CPUs to spare; 0.25 for 4
  // unbound ranks on 16 CPUs), and the level-2 cache per CPU (0: unknown, kAssumedLevel2Bytes
  // stands in). Both agreed by every rank (Team::ranksPerCpu).
  double ranksPerCpu = 1;
  size_t level2BytesPerCpu = 0;
};

// The level-2 cache per CPU the model assumes where the machine does not say.
inline constexpr size_t kAssumedLevel2Bytes = kCostDefaults.assumedLevel2Bytes;

// Predicted microseconds of schedule `id` of collective `kind` for `shape`, with pipelined
// schedules cut into `pieceBytes` pieces (0: the best piece size, pipelinePieceBytes()); nullopt
// for a schedule the model does not price (it is then never chosen by default, only through
// HOOP_ALGO).
std::optional<double> predictUs(OpKind kind, ScheduleId id, const CallShape& shape,
                                const CostModel& model, size_t pieceBytes = 0);
inline std::optional<double> predictAllReduceUs(ScheduleId id, const CallShape& shape,
                                                const CostModel& model) {
  return predictUs(OpKind::kAllReduce, id, shape, model);
}

// The piece size that minimises a pipelined schedule's time (the double tree allreduce and
// two-shot: their cache-sized pieces), or 0 for schedules whose pieces the model does not time
// (they keep HOOP_CHUNK_SIZE's default). A pipeline of `depth` hops moving S bytes in pieces of c
// takes (S/c + depth - 1) piece-steps of (alpha + c/beta); that is least at c = sqrt(S * alpha *
// beta / (depth - 1)), kept within [kMinPieceBytes, maxBytes].
inline constexpr size_t kMinPieceBytes = 16 << 10;
size_t pipelinePieceBytes(OpKind kind, ScheduleId id, const CallShape& shape,
                          const CostModel& model, size_t maxBytes);

// The double tree allreduce's pieces: small enough that what a rank holds at once (two halves,
// up to two children's partial sums and the piece going down) stays in its core's cache, larger
// over TCP, where each piece is also a system call (kCostDefaults.treePieceBytes*).
size_t treeAllReducePieceBytes(const CallShape& shape);

// The two-shot allreduce's slices: each round sends one slice of every piece to its owner and
// the folded slice back. Over shm the largest power of two (16 KiB up to the chunk size) such
// that one round's slices stay in the level-2 cache of the CPU they run on: the n-1 slices a rank
// sends and the n-1 it receives and folds, times the ranks sharing that CPU (docs/tuner.md,
// twoShotSliceBytes). Over TCP the chunk size, where it is priced whole.
size_t twoShotSliceBytes(const CallShape& shape);

CallShape callShape(const Team& comm, const CollectiveArgs& args);

}  // namespace hoop
