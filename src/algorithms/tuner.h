// hoop's own choice of schedule and pipeline piece size: an alpha-beta cost model. Each
// schedule's time is predicted from how many steps it takes (alpha: latency per message) and how
// many bytes each rank moves over its busiest link (beta: bytes per microsecond) and reduces (the
// CPU kernel's rate), for the link kinds the call crosses; the cheapest schedule that can serve
// the call wins. Pipelined schedules (chains and trees) also get the piece size that minimises
// their predicted time.
//
// Every input is the same on every rank (the call, the communicator's shape, the model's
// parameters), so every rank picks the same schedule. The parameters start as measured defaults
// for shared memory and TCP on a 2-core x86 VM (bench/RESULTS.md); a communicator measures its
// own links at init (calibration.h) and every rank adopts the slowest rank's figures. Explicit
// values win over both: HOOP_TUNE_SHM="alpha_us,GB/s", HOOP_TUNE_TCP, HOOP_TUNE_REDUCE="GB/s".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "base/types.h"

namespace hoop {

class Team;
struct CollectiveArgs;

struct LinkCost {
  double alphaUs;     // per message, one way
  double bytesPerUs;  // what a step of kLinkStepBytes each way adds to alphaUs, as a rate
};

// The step size a link's bandwidth is measured on (calibration.h) and quoted for: one shm slot,
// a few TCP segments.
inline constexpr size_t kLinkStepBytes = 256 << 10;

struct CostModel {
  LinkCost shm{1.0, 6000.0};
  LinkCost tcp{12.0, 2500.0};
  // One handshake through shared-memory eager buffers (no slot header, counters or copies).
  double eagerAlphaUs = 0.4;
  double reduceBytesPerUs = 10000.0;  // bytes of output per microsecond of the reduction kernel
  // Which fields the environment set: calibration leaves those alone.
  bool shmFromEnv = false;
  bool tcpFromEnv = false;
  bool reduceFromEnv = false;
  bool calibrate = true;  // HOOP_TUNE_CALIBRATE (0 keeps the defaults)
  // HOOP_TUNE_TRIAL (0: the model's pick, never timed; schedule_trial.h).
  bool trial = true;
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

// The level-2 cache per CPU the model assumes where the machine does not say: a common size on
// current x86 server cores.
inline constexpr size_t kAssumedLevel2Bytes = size_t{1} << 20;

// Predicted microseconds of schedule `name` of collective `kind` for `shape`, with pipelined
// schedules cut into `pieceBytes` pieces (0: the best piece size, pipelinePieceBytes()); nullopt
// for a schedule the model does not know (it is then never chosen by default, only through
// HOOP_ALGO).
std::optional<double> predictUs(OpKind kind, std::string_view name, const CallShape& shape,
                                const CostModel& model, size_t pieceBytes = 0);
inline std::optional<double> predictAllReduceUs(std::string_view name, const CallShape& shape,
                                                const CostModel& model) {
  return predictUs(OpKind::kAllReduce, name, shape, model);
}

// The piece size that minimises a pipelined schedule's time (the double tree allreduce and
// two-shot: their cache-sized pieces), or 0 for schedules whose pieces the model does not time
// (they keep HOOP_CHUNK_SIZE's default). A pipeline of `depth` hops moving S bytes in pieces of c
// takes (S/c + depth - 1) piece-steps of (alpha + c/beta); that is least at c = sqrt(S * alpha *
// beta / (depth - 1)), kept within [kMinPieceBytes, maxBytes].
inline constexpr size_t kMinPieceBytes = 16 << 10;
size_t pipelinePieceBytes(OpKind kind, std::string_view name, const CallShape& shape,
                          const CostModel& model, size_t maxBytes);

// The double tree allreduce's pieces: small enough that what a rank holds at once (two halves,
// up to two children's partial sums and the piece going down) stays in its core's cache:
// 128 KiB over shm, 1.3-1.7x faster than 512 KiB from 512 KiB to 32 MiB at 4 ranks; 256 KiB
// over TCP, where each piece is also a system call (128 KiB was up to 1.5x slower there).
size_t treeAllReducePieceBytes(const CallShape& shape);

// The two-shot allreduce's slices: each round sends one slice of every piece to its owner and
// the folded slice back. Over shm the largest power of two (16 KiB up to the chunk size) such
// that one round's slices stay in the level-2 cache of the CPU they run on: the n-1 slices a rank
// sends and the n-1 it receives and folds, times the ranks sharing that CPU. On 2 cores with
// 1 MiB each that is 64 KiB at 4 ranks, 32 KiB at 5 and 6, 16 KiB at 8: the best of 16, 32 and
// 64 KiB measured at each of those counts, 1.1-1.6x faster than 64 KiB at 8 ranks (bench/
// RESULTS.md, ninth pass). Over TCP the chunk size, where it is priced whole.
size_t twoShotSliceBytes(const CallShape& shape);

CallShape callShape(const Team& comm, const CollectiveArgs& args);

}  // namespace hoop
