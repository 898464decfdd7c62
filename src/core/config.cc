#include "core/config.h"

#include "base/env.h"
#include "base/error.h"

namespace hoop {

namespace {

// The largest size a setting takes where it says so: 1G.
constexpr size_t kMaxSettingBytes = size_t{1} << 30;

// A byte size from the environment ("512K"), at least `minimum`.
size_t byteSetting(const char* name, size_t fallback, size_t minimum) {
  auto text = envString(name);
  if (!text) return fallback;
  auto bytes = parseByteSize(*text);
  if (!bytes || *bytes < minimum) {
    fail(hoopInvalidArgument, name, "='", *text, "' is not a size of at least ", minimum, " bytes");
  }
  return *bytes;
}

// The same, for sizes that become ints or single allocations: at most 1G (`hint` then follows
// the complaint).
size_t cappedByteSetting(const char* name, size_t fallback, size_t minimum, const char* hint = "") {
  const size_t bytes = byteSetting(name, fallback, minimum);
  if (bytes > kMaxSettingBytes) fail(hoopInvalidArgument, name, " must be at most 1G", hint);
  return bytes;
}

// An integer setting that must lie in [low, high].
long long boundedInt(const char* name, long long fallback, long long low, long long high) {
  const long long value = envInt(name, fallback);
  if (value < low || value > high) {
    fail(hoopInvalidArgument, name, "=", value, " is not in ", low, "..", high);
  }
  return value;
}

RdmaOptions rdmaOptionsFromEnvironment() {
  RdmaOptions rdma;
  if (auto hca = envString("HOOP_IB_HCA")) rdma.hca = HcaFilter::parse(*hca);
  if (envString("HOOP_IB_GID_INDEX")) {
    rdma.gidIndex = static_cast<int>(boundedInt("HOOP_IB_GID_INDEX", 0, 0, 255));
  }
  rdma.queuePairs = static_cast<size_t>(
      boundedInt("HOOP_IB_QPS_PER_CONNECTION", static_cast<long long>(rdma.queuePairs), 1, 16));
  rdma.timeout = static_cast<int>(boundedInt("HOOP_IB_TIMEOUT", rdma.timeout, 1, 31));
  rdma.retryCount = static_cast<int>(boundedInt("HOOP_IB_RETRY_CNT", rdma.retryCount, 0, 7));
  rdma.slots =
      static_cast<size_t>(boundedInt("HOOP_IB_SLOTS", static_cast<long long>(rdma.slots), 2, 1024));
  rdma.slotBytes = cappedByteSetting("HOOP_IB_SLOT_SIZE", rdma.slotBytes, 4096);
  return rdma;
}

}  // namespace

Config Config::fromEnvironment() {
  Config config;
  config.initTimeout = envSeconds("HOOP_INIT_TIMEOUT", 300);
  config.opTimeout = envSeconds("HOOP_TIMEOUT", 600);
  config.socketStreams = static_cast<int>(envInt("HOOP_SOCKET_NSTREAMS", config.socketStreams));
  if (config.socketStreams < 1 || config.socketStreams > 64) {
    fail(hoopInvalidArgument, "HOOP_SOCKET_NSTREAMS=", config.socketStreams, " is not in 1..64");
  }
  // setsockopt takes an int; the kernel caps it at net.core.{w,r}mem_max anyway.
  config.socketBufferBytes = static_cast<int>(
      cappedByteSetting("HOOP_SOCKET_BUFFER", static_cast<size_t>(config.socketBufferBytes), 0,
                        " (0: kernel autotuning)"));
  if (auto congestion = envString("HOOP_SOCKET_CONGESTION")) {
    // The kernel's names are at most 15 characters (TCP_CA_NAME_MAX less the terminator).
    if (congestion->empty() || congestion->size() > 15) {
      fail(hoopInvalidArgument, "HOOP_SOCKET_CONGESTION='", *congestion,
           "' is not a congestion control's name (1 to 15 characters) or 'system'");
    }
    config.socketCongestion = *congestion == "system" ? "" : *congestion;
  }
  config.socketNotsentLowatBytes = static_cast<int>(
      cappedByteSetting("HOOP_SOCKET_NOTSENT_LOWAT",
                        static_cast<size_t>(config.socketNotsentLowatBytes), 0, " (0: no limit)"));
  config.chunkBytes = cappedByteSetting("HOOP_CHUNK_SIZE", config.chunkBytes, 64);
  config.chunkSetByUser = envString("HOOP_CHUNK_SIZE").has_value();
  config.costModel = CostModel::fromEnvironment();
  if (auto text = envString("HOOP_ALGO")) config.algorithms = AlgoOverrides::parse(*text);
  config.shm.slots = static_cast<size_t>(envInt("HOOP_SHM_SLOTS", 8));
  if (config.shm.slots < 2 || config.shm.slots > 1024) {
    fail(hoopInvalidArgument, "HOOP_SHM_SLOTS=", config.shm.slots, " is not in 2..1024");
  }
  config.shm.slotBytes = byteSetting("HOOP_SHM_SLOT_SIZE", config.shm.slotBytes, 4096);
  config.shm.spreadSetByUser = envString("HOOP_SHM_SPREAD").has_value();
  config.shm.spreadBytes = byteSetting("HOOP_SHM_SPREAD", 0, 0);
  config.shm.useCma = envInt("HOOP_SHM_CMA", 1) != 0;
  config.shm.cmaThresholdBytes =
      byteSetting("HOOP_SHM_CMA_THRESHOLD", config.shm.cmaThresholdBytes, 0);
  config.rdma = rdmaOptionsFromEnvironment();
  config.spinSetByUser = envString("HOOP_SPIN_US").has_value();
  config.spinBeforeSleep = std::chrono::microseconds(envInt("HOOP_SPIN_US", 50));
  return config;
}

}  // namespace hoop
