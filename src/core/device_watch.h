// What ends device work that cannot finish. A collective on device memory returns once its work
// is on the stream, so no host thread waits in it to notice a dead peer or a time-out: this
// watch's thread does, while calls are outstanding.
//
// Each call ends with addToCounter on a counter in host memory the watch reads, so it knows how
// many calls the streams have finished against how many were enqueued (a graph replayed many
// times counts more, never fewer). While some are outstanding it checks every few milliseconds
// that every peer process is alive (the peers of device connections share this host) and that
// the counter moved within HOOP_TIMEOUT, and reads the pairs' ledgers for a mismatch a peer found
// (device_ledger.h). When one is not, it keeps the error for the next call
// and hoopCommGetAsyncError, and releases every wait: it writes the released state into every
// flag the streams wait on (device_slots.h), again and again, since the streams' own writes
// overwrite it, until they have drained. hoopCommAbort and hoopCommDestroy release the same way.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/mapping.h"
#include "device/device_runtime.h"
#include "transport/cuda_ipc/device_ledger.h"

namespace hoop {

class DeviceWatch {
 public:
  struct Peer {
    int pid;
    std::string name;  // "rank 3 (host a, pid 912)"
  };
  DeviceWatch(DeviceRuntime& runtime, std::chrono::milliseconds timeout, int rank);
  ~DeviceWatch();
  DeviceWatch(const DeviceWatch&) = delete;
  DeviceWatch& operator=(const DeviceWatch&) = delete;

  // The counter the streams add to, as the device addresses it.
  uint32_t* counterOnDevice() const { return counterOnDevice_; }
  // Another call's work was enqueued; `description` names it in a time-out's message.
  void callEnqueued(std::string description);
  // The flags of a new device connection (host addresses, `count` words), its peer (pid 0: on
  // another host, not looked at), and the pair's ledger (none for a staged connection, whose
  // link checks every frame's call itself): a mismatch the peer found there fails this rank's work
  // too, and a time-out names the peers that have not enqueued what this rank waits for.
  void watchConnection(uint32_t* flags, size_t count, Peer peer, const DeviceLedger* ledger);
  // Where another rank's failure notice shows (no wait; nullopt when none came or it cannot
  // look now): a rank that found a mismatch or lost a peer tells every rank, and the ones whose
  // streams wait on something else hear it here rather than at their time-out.
  void listenForNotices(std::function<std::optional<Error>()> poll);
  // Fails the outstanding work with `error` (found by the caller while enqueueing) and releases
  // its waits until the streams have drained.
  void failWith(Error error);
  // The error that ended the device work, once the watch found one.
  std::optional<Error> failure() const;
  // The same, after reading the ledgers at once (a mismatch a peer found since the watch last
  // looked): what a new call checks before it enqueues anything.
  std::optional<Error> checkPeers();
  // Waits until the streams have drained, or `limit` passed, releasing every wait meanwhile
  // when `release`; true when drained.
  bool drainWithin(std::chrono::milliseconds limit, bool release);
  // Ends the watch and forgets the flags: before the connections that own them go.
  void stop();

 private:
  void run();
  uint64_t finished() const;
  bool drained() const { return finished() >= enqueued_.load(std::memory_order_acquire); }
  void releaseEveryWait();
  std::optional<Error> mismatchFromAPeer() const;
  std::string whoLags() const;

  DeviceRuntime& runtime_;
  std::chrono::milliseconds timeout_;
  int rank_;
  std::string self_;  // "rank 2", for messages
  Mapping counterPage_;
  uint32_t* counterOnDevice_ = nullptr;
  // Calls enqueued, counted past 32 bits (the counter wraps; finished() unwraps it).
  std::atomic<uint64_t> enqueued_{0};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::pair<uint32_t*, size_t>> flags_;
  std::vector<Peer> peers_;
  std::vector<const DeviceLedger*> ledgers_;
  std::function<std::optional<Error>()> pollNotices_;  // by connection, as flags_ and peers_
  std::string oldestPending_;  // the description of the first call not yet finished
  std::vector<std::pair<uint64_t, std::string>> pending_;
  std::optional<Error> failure_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hoop
