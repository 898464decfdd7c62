// A transport: one way of carrying a pair of ranks' messages (shared memory, TCP, RDMA, CUDA
// IPC). Each registers once (transport_registry.h); the communicator asks the registry which one
// serves each peer and never names a concrete transport itself, so a new one joins without an
// edit to the communicator, the schedules or the tuner.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "transport/connection.h"
#include "transport/memory_registry.h"
#include "transport/rdma/rdma_options.h"
#include "transport/rdma/rdma_reach.h"
#include "transport/setup_channel.h"
#include "transport/shm/shm_options.h"

namespace hoop {

// One pair of ranks, as a transport sees it when it decides and when it connects. Built from the
// rendezvous table, so both ranks of the pair see the same facts.
struct PeerPair {
  int self = 0;
  int peer = 0;
  bool sameHost = false;
  std::string peerName;  // "rank 3 (host b, pid 912)", for messages
  // Each rank's RDMA as it told the rendezvous (rdma/rdma_reach.h).
  RdmaReach selfRdma{};
  RdmaReach peerRdma{};
  // Whether HOOP_TRANSPORT names the transport being asked (rather than merely allowing it):
  // chooseTransport sets it for each transport it asks. A transport that serves only some pairs
  // by default may take the others when named (rdma within a host, for tests).
  bool named = false;
};

// The settings a transport may read when it connects (the communicator's, after init adapted
// them to the machine).
struct TransportSettings {
  ShmOptions shm;
  RdmaOptions rdma;
  // The job's tag, repeated in setup messages that must come from this job.
  uint64_t jobTag = 0;
  // Buffers the user registered with the communicator (hoopCommRegister); may be null.
  MemoryRegistry* registry = nullptr;
};

class Transport {
 public:
  virtual ~Transport() = default;

  // As HOOP_TRANSPORT and the logs name it: "shm".
  virtual std::string_view name() const = 0;
  // Why it cannot carry this pair's data ("shm works only between ranks on the same host"), or
  // empty when it can. Decided from the pair alone, so both ranks reach the same answer without
  // asking each other.
  virtual std::string whyNot(const PeerPair& pair) const = 0;
  // Whether the ranks it connects map each other's memory: schedules that read peers' buffers in
  // place need that between every pair.
  virtual bool sharesMemory() const { return false; }
  // Whether its data rides the pair's TCP link itself (then the link is announced as the pair's
  // data path; otherwise it only carries the setup and stays idle).
  virtual bool carriesDataOnLink() const { return false; }
  // Whether a pair that falls back from it to a later transport is worth a line at INFO saying
  // why (rdma: a cluster without it runs, slower, and should say so); not for transports that
  // serve only some pairs by design (shm across hosts).
  virtual bool explainsFallback() const { return false; }

  // Builds the pair's data connection; both ranks call it at the same time. Every pair has a TCP
  // link first (it reaches every peer, and the control plane and setups ride it): `link` owns
  // it. A transport whose data rides the link takes it (moves from `link`), and so may one that
  // watches it (rdma: the link closes when the peer's process ends); the others leave it for the
  // communicator to keep. `setup` exchanges with the peer over that link.
  virtual std::unique_ptr<Connection> connect(const PeerPair& pair,
                                              std::unique_ptr<Connection>& link,
                                              SetupChannel& setup,
                                              const TransportSettings& settings) = 0;
};

}  // namespace hoop
