// A Connection to one peer over reliable-connected queue pairs (RDMA). Per direction the
// receiver owns a ring of registered slots (rdma_layout.h); the sender writes each message's
// header and data into the next free slot with RDMA WRITE WITH IMMEDIATE, which also wakes the
// receiver, and the receiver returns credits as it frees slots (slot_credits.h). Small messages
// go inline in the work request; a message larger than a slot streams through several slots,
// or, where both ranks registered its buffers (hoopCommRegister), is announced in one slot and
// then written straight from the sender's buffer into the receiver's (rendezvous), split across
// the connection's queue pairs. Queue pairs are spread over the rails (device ports) the
// discovery found; the ring's positions take them in turn.
//
// Like shared memory it offers InPlaceReceive (a piece is reduced straight out of its slot) and
// DirectSend (a result is written into the outbound staging slot and sent from there), so the
// same schedules run with the same copies saved.
//
// Nothing blocks. progress() polls the completion queues; addWaitFds() arms them and hands
// the wait loop their completion channels. A peer that stops answering fails the connection
// through the queue pairs' retry limit: while work waits, a small write probes the path every
// probe interval, so a dead peer or a cut link surfaces within HOOP_IB_TIMEOUT x
// HOOP_IB_RETRY_CNT even when nothing else is in flight.
#pragma once

#if defined(HOOP_HAVE_VERBS)

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mapping.h"
#include "base/unique_fd.h"
#include "transport/capabilities.h"
#include "transport/connection.h"
#include "transport/memory_registry.h"
#include "transport/rdma/rdma_layout.h"
#include "transport/rdma/rdma_setup_wire.h"
#include "transport/rdma/slot_credits.h"
#include "transport/rdma/verbs_objects.h"

namespace hoop {

// One device port a connection uses and what it made there. Members go in reverse order: the
// memory region and the queue before the channel, all before the device.
struct RdmaRail {
  RdmaRail() = default;
  ~RdmaRail();
  RdmaRail(const RdmaRail&) = delete;
  RdmaRail& operator=(const RdmaRail&) = delete;

  std::shared_ptr<VerbsDevice> device;
  RdmaRailInfo local;  // as told to the peer
  int activeMtu = 0;   // enum ibv_mtu
  uint32_t maxMessageBytes = 0;
  CompletionChannel channel;
  CompletionQueue cq;
  MemoryRegion memory;  // the connection's block on this device
  bool armed = false;   // the queue will raise an event on the channel
  unsigned unackedEvents = 0;
};

struct RdmaQueuePairState {
  QueuePair qp;
  size_t rail = 0;        // ours
  size_t remoteRail = 0;  // the peer's rail its partner lives on
  uint32_t sendDepth = 0;
  uint32_t sendsOutstanding = 0;
  uint32_t recvDepth = 0;
  uint32_t recvsToRepost = 0;
  uint32_t maxInline = 0;
  bool probing = false;
};

// Everything connectRdma built, handed to the connection.
struct RdmaEndpoint {
  Mapping memory;  // the block (rdma_layout.h), registered on every rail
  RdmaLayout layout;
  RdmaLayout remoteLayout;
  std::vector<std::unique_ptr<RdmaRail>> rails;
  std::vector<RdmaQueuePairState> queuePairs;
  std::vector<RdmaRailInfo> remoteRails;
  int selfRank = -1;
  std::string peer;  // "rank 3 (host b, pid 912)"
  MemoryRegistry* registry = nullptr;
  std::chrono::milliseconds probeInterval{500};
  // The pair's TCP link, idle once the setup is done, kept to notice at once when the peer's
  // process ends (its sockets close); may be null.
  std::unique_ptr<Connection> link;
};

// What a work request is, kept in its 64-bit id with its queue pair and a value (a position or
// a ticket), so that its completion finds what it finished.
enum class RdmaWork : uint8_t { kSlotWrite = 1, kCredit, kClearToSend, kStripe, kProbe, kRecv };
uint64_t rdmaWorkId(RdmaWork kind, size_t queuePair, uint64_t value);

// Posts `count` receives (no buffer: they only catch immediates) on queue pair number
// `queuePair` of a connection; throws on failure.
void postImmediateReceives(ibv_qp* qp, size_t queuePair, uint32_t count,
                           const std::string& context);

class RdmaConnection final : public Connection, public InPlaceReceive, public DirectSend {
 public:
  explicit RdmaConnection(RdmaEndpoint endpoint);
  ~RdmaConnection() override;
  RdmaConnection(const RdmaConnection&) = delete;
  RdmaConnection& operator=(const RdmaConnection&) = delete;

  uint64_t postSend(const void* data, size_t bytes, FrameTag tag) override;
  uint64_t postRecv(void* data, size_t bytes, FrameTag tag) override;
  uint64_t sendsCompleted() const override { return sends_.completed; }
  uint64_t recvsCompleted() const override { return recvs_.completed; }
  uint64_t sendsPosted() const override { return sends_.posted; }
  uint64_t recvsPosted() const override { return recvs_.posted; }
  size_t maxInFlight() const override { return kMaxInFlight; }
  bool progress() override;
  // Arms every rail's completion queue and adds its channel; when completions came in before the
  // arming took, adds a descriptor that is always ready instead, so the caller does not sleep.
  void addWaitFds(std::vector<pollfd>& fds) override;
  std::optional<FrameTag> peekUnclaimed() override;
  bool idle() const override { return !workPending(); }

  // InPlaceReceive: a message of at most one slot, read where it landed.
  InPlaceReceive* inPlaceReceive() override { return this; }
  bool canPeek(size_t bytes) const override { return bytes <= layout_.slotBytes(); }
  const void* peekRecv(size_t bytes, FrameTag tag) override;
  void releasePeeked() override;

  // DirectSend: the next outbound staging slot, sent from where it was written.
  DirectSend* directSend() override { return this; }
  void* sendSlot(size_t bytes) override;
  uint64_t publishSend(size_t bytes, FrameTag tag) override;

  // For logs and tests.
  size_t queuePairCount() const { return queuePairs_.size(); }
  size_t railCount() const { return rails_.size(); }
  uint64_t rendezvousSends() const { return rendezvousSends_; }
  uint64_t rendezvousRecvs() const { return rendezvousRecvs_; }
  uint64_t inlineWrites() const { return inlineWrites_; }
  uint64_t probesSent() const { return probesSent_; }

 private:
  static constexpr size_t kMaxInFlight = 256;

  enum class SendStage : uint8_t {
    kFresh,           // not looked at yet
    kFragments,       // streams through the slots
    kAnnounce,        // a rendezvous: its announcement waits for a slot
    kAwaitClearance,  // announced; the receiver's answer has not come
    kStripes,         // cleared: writing straight into the receiver's buffer
    kPosted,          // everything is on the queues
  };
  struct SendOp {
    const char* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
    SendStage stage = SendStage::kFresh;
    bool headerSent = false;  // a 0-byte message still takes one slot
    size_t sent = 0;          // bytes handed to slots
    bool done = false;
    // Rendezvous: where the data goes, and the writes still to post or to complete.
    RdmaClearToSend clearance{};
    size_t nextStripe = 0;
    size_t stripeOffset = 0;
    uint32_t writesOutstanding = 0;
    std::vector<uint32_t> localKeys;  // per queue pair: the send buffer's lkey on its rail
  };
  struct RecvOp {
    char* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
    size_t received = 0;
    uint64_t fragments = 0;
    bool awaitingParts = false;  // cleared a rendezvous; its parts land in our buffer
    uint64_t senderTicket = 0;
    uint32_t partsExpected = 0;
    uint32_t partsArrived = 0;
  };
  template <typename Op>
  struct Queue {
    std::vector<Op> ring = std::vector<Op>(kMaxInFlight);
    uint64_t posted = 0;
    uint64_t completed = 0;
    Op& at(uint64_t ticket) { return ring[ticket % kMaxInFlight]; }
    const Op& at(uint64_t ticket) const { return ring[ticket % kMaxInFlight]; }
  };

  char* block(size_t offset) const { return static_cast<char*>(memory_.get()) + offset; }
  size_t queuePairOf(uint64_t position) const { return position % queuePairs_.size(); }

  // Completions.
  bool pollCompletions();
  size_t pollRail(RdmaRail& rail);
  void handleCompletion(const ibv_wc& wc);
  void handleImmediate(uint32_t imm, size_t queuePair);
  void clearanceArrived(uint32_t ticketBits);
  void partArrived(uint32_t ticketBits);
  void drainEvents();
  void repostReceives();
  [[noreturn]] void failCompletion(const ibv_wc& wc);
  [[noreturn]] void failGarbage(const std::string& why) const;

  // Posting work requests; each returns false when the queue pair's send queue is full.
  bool post(size_t queuePair, ibv_send_wr& wr);

  // Sending.
  bool progressSends();
  void completeSends();
  bool canWriteSlot(size_t dataBytes) const;
  RdmaSlotHeader headerFor(FrameTag tag, size_t bytes, uint64_t ticket) const;
  // Writes the next slot: `header`, then `bytes` of `data` (copied into the staging slot unless
  // it goes inline), or already in the staging slot when `data` is null.
  void writeSlot(RdmaSlotHeader header, const char* data, size_t bytes);
  bool startRendezvous(SendOp& op, uint64_t ticket);
  bool postStripes(SendOp& op, uint64_t ticket);
  bool sendCreditIfDue();
  void sendProbes();

  // Receiving.
  bool progressRecvs();
  RdmaSlotHeader headSlotHeader() const;
  void checkHeader(const RdmaSlotHeader& header, const RecvOp& op) const;
  // Answers an announcement for `op`: clears it into the registered buffer, or declines.
  bool answerAnnouncement(RecvOp& op, const RdmaSlotHeader& header);
  void releaseHeadSlot();

  // Registered memory of a user buffer on rail `rail` (through the registry), or nullptr.
  ibv_mr* userRegion(const void* data, size_t bytes, size_t rail);

  bool workPending() const;
  std::string pendingWork() const;
  std::string railName(size_t rail) const;
  void noteMovement(bool moved);
  // Fails the connection when the peer closed the pair's TCP link (its process ended) while
  // something it owed this side has not come.
  void checkLink();

  // The block outlives its memory regions (in rails_), which outlive the queue pairs.
  Mapping memory_;
  RdmaLayout layout_;
  RdmaLayout remoteLayout_;
  std::vector<std::unique_ptr<RdmaRail>> rails_;
  std::vector<RdmaQueuePairState> queuePairs_;
  std::vector<RdmaRailInfo> remoteRails_;
  int selfRank_;
  std::string peer_;
  MemoryRegistry* registry_;
  std::chrono::milliseconds probeInterval_;
  UniqueFd alwaysReady_;  // an eventfd that stays readable: "do not sleep"
  std::unique_ptr<Connection> link_;
  int linkFd_ = -1;  // its socket (link_ owns it), watched for the peer's end; nothing is read

  Queue<SendOp> sends_;
  Queue<RecvOp> recvs_;
  uint64_t sendCursor_ = 0;  // first send not yet wholly on the queues
  OutboundSlots outbound_;
  InboundSlots inbound_;
  std::vector<bool> stagingBusy_;    // per outbound slot: its write has not completed
  std::vector<bool> clearanceBusy_;  // per outbound CTS entry: its write has not completed

  struct Peek {
    bool active = false;
    bool wanted = false;
    const void* data = nullptr;
    size_t bytes = 0;
    FrameTag tag{};
  } peek_;

  std::string failure_;  // set once the connection failed: every later call throws it again
  std::chrono::steady_clock::time_point idleSince_{};
  unsigned idlePasses_ = 0;

  // Writes of data the peer has not acknowledged yet (slots, rendezvous parts, answers): a send
  // counts as complete once its bytes are on the queue, so the connection may not go before
  // they are delivered (see the destructor).
  uint64_t dataWritesOutstanding_ = 0;
  static bool carriesData(uint64_t wrId);

  uint64_t rendezvousSends_ = 0;
  uint64_t rendezvousRecvs_ = 0;
  uint64_t inlineWrites_ = 0;
  uint64_t probesSent_ = 0;
};

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
