// Rendezvous: every rank connects to the root, presents the job secret and its own details, and
// receives everyone's. The root is a thread in one process (the hoopGetUniqueId caller, or rank 0
// under a launcher). Afterwards ranks talk to each other directly; the root goes away.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/host_identity.h"
#include "base/secret.h"
#include "core/agreed_settings.h"
#include "hoop/hoop.h"
#include "topology/host_cores.h"
#include "transport/rdma/rdma_reach.h"
#include "transport/tcp/socket.h"

namespace hoop {

// What a hoopUniqueId carries.
struct BootstrapId {
  SocketAddress root;
  Secret secret;
  bool authenticated = true;
  // Tells jobs apart when there is no secret (and is checked in either case).
  uint64_t jobTag = 0;

  hoopUniqueId encode() const;
  static BootstrapId decode(const hoopUniqueId& id);
};

// What every rank learns about every other rank.
struct PeerInfo {
  int rank = -1;
  int pid = 0;
  uint64_t hostId = 0;  // hostname + boot id; equal ids share a host
  std::string hostName;
  SocketAddress listenAddress;
  // Where it may run, and the cache each of those CPUs has (host_cores.h): the same table on
  // every rank, so figures derived from it are agreed without another exchange.
  CpuMask cpus;
  size_t level2BytesPerCpu = 0;  // 0: the machine did not say
  // Its digests of the settings every rank must share (agreed_settings.h).
  SettingDigests settings{};
  // Its RDMA device, port and fabric, or why it has none: every rank decides alike whether a
  // pair uses RDMA (transport/rdma/rdma_reach.h).
  RdmaReach rdma;

  // "rank 3 (host b, pid 912)": how messages name a peer.
  std::string describe() const;
};

class RootService {
 public:
  // Binds `address` (port 0 picks one) and serves one rendezvous on a thread of its own.
  RootService(const SocketAddress& address, const BootstrapId& id,
              std::chrono::milliseconds timeout);
  ~RootService();
  RootService(const RootService&) = delete;
  RootService& operator=(const RootService&) = delete;

  // The address ranks connect to (the bound port filled in).
  const SocketAddress& address() const { return address_; }
  bool finished() const { return finished_.load(std::memory_order_acquire); }

 private:
  void run();

  SocketAddress address_;
  BootstrapId id_;
  std::chrono::milliseconds timeout_;
  UniqueFd listener_;
  UniqueFd wakeup_;  // eventfd: the destructor's way to stop a pending rendezvous
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

// Keeps root services started by hoopGetUniqueId alive until their rendezvous ends.
void adoptRootService(std::unique_ptr<RootService> service);

// Registers with the root and returns all ranks' details, indexed by rank. `describeSelf` gets
// the local address of the connection to the root (the interface that reaches it) and returns
// this rank's details, its listening address included. `aborted`, when given, is looked at
// while waiting, so another thread can end a rendezvous that would wait long (hoopCommAbort).
std::vector<PeerInfo> rendezvous(const BootstrapId& id, int nranks, int rank,
                                 const std::function<PeerInfo(const SocketAddress&)>& describeSelf,
                                 Clock::time_point deadline,
                                 const std::function<bool()>& aborted = nullptr);

}  // namespace hoop
