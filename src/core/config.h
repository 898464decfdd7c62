// Per-communicator settings, read from the environment once at init.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "algorithms/algo_overrides.h"
#include "algorithms/tuner.h"
#include "transport/rdma/rdma_options.h"
#include "transport/shm/shm_options.h"
#include "transport/tcp/socket.h"

namespace hoop {

struct Config {
  std::chrono::milliseconds initTimeout{300'000};  // HOOP_INIT_TIMEOUT (s)
  std::chrono::milliseconds opTimeout{600'000};    // HOOP_TIMEOUT (s), as torch.distributed
  int socketStreams = 1;                           // HOOP_SOCKET_NSTREAMS
  int socketBufferBytes = 4 << 20;                 // HOOP_SOCKET_BUFFER (0: kernel autotuning)
  // HOOP_SOCKET_CONGESTION: a congestion control for the data sockets; unset or "system" (stored
  // empty) keeps the kernel's own (net.ipv4.tcp_congestion_control), which its administrator
  // chose for its network. Reno is worth naming only with the schedule trial on
  // (HOOP_TUNE_TRIAL=1): its alternating bursts can leave BBR and CUBIC sockets slow for the
  // calls that follow (schedule_trial.h).
  std::string socketCongestion;
  // HOOP_SOCKET_NOTSENT_LOWAT (0: the kernel's default, no limit): how many bytes may wait unsent
  // in a data socket. With megabytes queued behind a closed window, each acknowledgement that
  // opens it sends from the CPU that took it while the sender's own calls send from the sender's
  // CPU; over loopback the two CPUs' queues deliver out of order, which loss-based congestion
  // controls such as reno take for loss.
  // 128 KiB ended the reordering over loopback, and large calls ran faster with it
  // (docs/design-notes.md, "Measurements behind the defaults").
  int socketNotsentLowatBytes = 128 << 10;
  size_t chunkBytes = 512 << 10;  // HOOP_CHUNK_SIZE: pipeline piece size
  // Set: every schedule uses chunkBytes. Unset: the tuner sizes pipelined schedules' pieces
  // (up to chunkBytes) and the others use chunkBytes.
  bool chunkSetByUser = false;
  AlgoOverrides algorithms;  // HOOP_ALGO (algorithms/algo_overrides.h)
  CostModel costModel;       // HOOP_TUNE_* (algorithms/tuner.h)
  // HOOP_SPIN_US; unset: 50 us, or 0 when this host runs more ranks than it has cores (a
  // spinning rank would then hold the core its peer needs to make the data it waits for).
  std::chrono::microseconds spinBeforeSleep{50};
  bool spinSetByUser = false;

  ShmOptions shm;    // HOOP_SHM_SLOTS, HOOP_SHM_SLOT_SIZE, HOOP_SHM_CMA, HOOP_SHM_CMA_THRESHOLD
  RdmaOptions rdma;  // HOOP_IB_*

  static Config fromEnvironment();
  // The data sockets' options from the HOOP_SOCKET_* settings above.
  DataSocketTuning dataSocketTuning() const {
    return {socketBufferBytes, socketCongestion, socketNotsentLowatBytes};
  }
};

}  // namespace hoop
