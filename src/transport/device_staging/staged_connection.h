// A device connection to a rank on another host: device memory cannot be mapped across hosts,
// so each piece is staged through pinned host memory and carried by a TCP link of its own,
// which a host thread drives (StagingProgress) while the streams run.
//
// Each direction has a ring of staging slots in host memory the device addresses (mapHost), one
// flag per slot beside them, and a queue of the pieces posted, each with its message's tag:
//
//   sender's stream, piece p (slot p % slots):   sender's host thread, piece p:
//     wait   flag & (kEmpty | kAborted)            wait   flag == kFull
//     copy   data -> staging slot                  send   the slot over the link, tagged
//     write  flag = kFull                          write  flag = kEmpty once sent
//
//   receiver's host thread, piece p:              receiver's stream, piece p:
//     wait   flag == kEmpty                        wait   flag & (kFull | kAborted)
//     recv   the link's next frame into the slot   copy   staging slot -> data
//     write  flag = kFull                          write  flag = kEmpty
//
// As on a device connection over IPC (device_slots.h) the flag alternates strictly, each side
// writing only the state the other waits for; here the other side of each flag is this rank's own
// host thread, and the link between the hosts carries the frames in order, with their tags, so a
// peer in another call is found as on any TCP connection (hoopInvalidUsage naming both).
//
// Pieces are queued for the host thread when the schedule posts them, while the stream work is
// enqueued: the thread works through the queues in order whatever the streams do, so it only
// serves calls enqueued once. A graph replays the stream work without posting again: a call
// across hosts is not captured (DeviceTeam refuses it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/mapping.h"
#include "device/device_runtime.h"
#include "transport/connection.h"
#include "transport/cuda_ipc/device_call_queue.h"

namespace hoop {

class StagedDeviceConnection final : public Connection, public DeviceSlotLink {
 public:
  // `link` carries the frames to the peer (a TCP connection of its own, made by
  // connectStaged); `slots` staging slots of `slotBytes` each way.
  StagedDeviceConnection(DeviceCallQueue& queue, int peer, size_t slots, size_t slotBytes,
                         std::unique_ptr<Connection> link, std::string peerName);
  ~StagedDeviceConnection() override;

  // Connection: as a device connection's, complete once on the streams.
  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override;
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override;
  uint64_t sendsCompleted() const override { return sendsPosted_; }
  uint64_t recvsCompleted() const override { return recvsPosted_; }
  uint64_t sendsPosted() const override { return sendsPosted_; }
  uint64_t recvsPosted() const override { return recvsPosted_; }
  size_t maxInFlight() const override { return SIZE_MAX; }
  bool progress() override { return false; }
  void addWaitFds(std::vector<pollfd>&) override {}
  void fenceSends() override { queue_.joinSendsTo(peer_); }

  // DeviceSlotLink
  size_t slotBytes() const override { return slotBytes_; }
  void enqueueSendPiece(const char* data, size_t bytes, DeviceStream stream) override;
  void enqueueRecvPiece(char* data, size_t bytes) override;

  // For the host thread: moves every piece it can (returns whether any moved), throwing the
  // link's error; and the link's descriptors to sleep on.
  bool advance();
  bool hasPendingPieces() const;
  void addLinkWaitFds(std::vector<pollfd>& fds);
  // The flags, as the host sees them, for the watch's release.
  uint32_t* hostFlags() const { return static_cast<uint32_t*>(memory_.get()); }
  size_t hostFlagCount() const;

 private:
  struct Piece {
    size_t bytes;
    FrameTag tag;
    uint64_t ticket = 0;  // the link's, once posted
    bool posted = false;
  };
  enum Direction : size_t { kOut = 0, kIn = 1 };
  uint32_t* flagOnHost(Direction direction, size_t slot) const;
  uint32_t* flagOnDevice(Direction direction, size_t slot) const;
  char* slotOnHost(Direction direction, size_t slot) const;
  char* slotOnDevice(Direction direction, size_t slot) const;
  void queuePieces(Direction direction, size_t bytes, const FrameTag& tag);
  bool advanceSends();
  bool advanceRecvs();
  DeviceRuntime& runtime() const { return queue_.runtime(); }

  DeviceCallQueue& queue_;
  int peer_;
  size_t slots_;
  size_t slotBytes_;
  std::unique_ptr<Connection> link_;
  std::string peerName_;
  // Both directions' flags (one per kFlagStride) and then their slots, page-aligned and mapped
  // for the device.
  Mapping memory_;
  char* memoryOnDevice_ = nullptr;
  size_t flagBytes_ = 0;
  uint64_t sendsPosted_ = 0;
  uint64_t recvsPosted_ = 0;
  // The streams' next slot each way (the enqueueing thread's).
  size_t nextSendSlot_ = 0;
  size_t nextRecvSlot_ = 0;

  // The pieces the host thread has still to move, in order, and the index of the first one's
  // slot. Filled by the enqueueing thread, emptied by the host thread.
  mutable std::mutex mutex_;
  std::deque<Piece> pieces_[2];
  uint64_t firstPiece_[2] = {0, 0};
};

}  // namespace hoop
