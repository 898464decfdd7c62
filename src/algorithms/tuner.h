// hoop's own choice of allreduce schedule: an alpha-beta cost model. Each schedule's time is
// predicted from how many steps it takes (alpha: latency per message) and how many bytes each
// rank moves over its busiest link (beta: bytes per microsecond) and reduces (the CPU kernel's
// rate), for the link kinds the call crosses; the cheapest schedule that can serve the call wins.
//
// Every input is the same on every rank (the call, the communicator's shape, the model's
// parameters from the environment), so every rank picks the same schedule. The parameters are
// measured defaults for shared memory and TCP on a 2-core x86 VM (bench/RESULTS.md), overridable
// per link kind: HOOP_TUNE_SHM="alpha_us,GB/s", HOOP_TUNE_TCP, HOOP_TUNE_REDUCE="GB/s".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hoop {

class Communicator;
struct CollectiveArgs;

struct LinkCost {
  double alphaUs;     // per message, one way
  double bytesPerUs;  // streaming bandwidth
};

struct CostModel {
  LinkCost shm{1.0, 6000.0};
  LinkCost tcp{12.0, 2500.0};
  // One handshake through shared-memory eager buffers (no slot header, counters or copies).
  double eagerAlphaUs = 0.4;
  double reduceBytesPerUs = 10000.0;  // bytes of output per microsecond of the reduction kernel

  // Defaults, with HOOP_TUNE_* overrides; a malformed value is hoopInvalidArgument naming it.
  static CostModel fromEnvironment();
};

// The shape of one call, as the model sees it.
struct CallShape {
  size_t bytes = 0;  // the whole buffer
  size_t ranks = 1;
  size_t hosts = 1;
  size_t ranksPerHost = 1;    // 0 when hosts have different counts
  bool sharedMemory = false;  // every peer of a single-host job over shm
};

// Predicted microseconds of allreduce schedule `name` for `shape`; nullopt for a schedule the
// model does not know (it is then never chosen by default, only through HOOP_ALGO).
std::optional<double> predictAllReduceUs(std::string_view name, const CallShape& shape,
                                         const CostModel& model);

CallShape callShape(const Communicator& comm, const CollectiveArgs& args);

}  // namespace hoop
