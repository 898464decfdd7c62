#include "transport/rdma/rdma_connection.h"

#if defined(HOOP_HAVE_VERBS)

#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "device/cuda/memory_kind.h"
#include "transport/rdma/rdma_dmabuf.h"
#include "transport/tcp/tcp_connection.h"

namespace hoop {
namespace {

// A rendezvous message is split across the queue pairs in stripes of at least this many bytes,
// each written in requests of at most kMaxWriteBytes (Soft-RoCE takes at most 8 MiB in one).
constexpr size_t kMinStripeBytes = 256 << 10;
constexpr size_t kMaxWriteBytes = 4 << 20;
// Completions taken per poll call.
constexpr int kPollBatch = 32;
// Events acknowledged in one call (each acknowledgement takes a lock in libibverbs).
constexpr unsigned kAckBatch = 64;

constexpr int kUserAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

// The parts a rendezvous message of `bytes` travels in over `queuePairs` queue pairs, and each
// part's size (the last may be shorter): both sides compute them alike.
size_t stripeCount(size_t bytes, size_t queuePairs) {
  return std::clamp<size_t>(bytes / kMinStripeBytes, 1, queuePairs);
}
size_t stripeBytes(size_t bytes, size_t stripes) {
  const size_t even = (bytes + stripes - 1) / stripes;
  return (even + 4095) / 4096 * 4096;
}

// The memory region of a registered user buffer on one device.
class RdmaAttachment final : public MemoryRegistry::Attachment {
 public:
  RdmaAttachment(std::shared_ptr<VerbsDevice> device, MemoryRegion region)
      : device_(std::move(device)), region_(std::move(region)) {}
  ibv_mr* region() const { return region_.get(); }

 private:
  std::shared_ptr<VerbsDevice> device_;  // outlives the region
  MemoryRegion region_;
};

std::string portState(const std::string& device, int port) {
  std::ifstream file(str("/sys/class/infiniband/", device, "/ports/", port, "/state"));
  std::string line;
  std::getline(file, line);
  // "1: DOWN", "4: ACTIVE"
  const size_t colon = line.find(": ");
  return colon == std::string::npos ? line : line.substr(colon + 2);
}

}  // namespace

RdmaRail::~RdmaRail() {
  // Every event taken from the channel must be acknowledged before its queue goes.
  if (cq && unackedEvents > 0) device->verbs().ackCqEvents(cq.get(), unackedEvents);
}

void postImmediateReceives(ibv_qp* qp, size_t queuePair, uint32_t count,
                           const std::string& context) {
  const uint64_t id = rdmaWorkId(RdmaWork::kRecv, queuePair, 0);
  constexpr uint32_t kChain = 64;
  ibv_recv_wr chain[kChain];
  while (count > 0) {
    const uint32_t batch = std::min(count, kChain);
    for (uint32_t i = 0; i < batch; ++i) {
      chain[i] = {};
      chain[i].wr_id = id;
      chain[i].next = i + 1 < batch ? &chain[i + 1] : nullptr;
    }
    ibv_recv_wr* bad = nullptr;
    if (const int error = ibv_post_recv(qp, chain, &bad); error != 0) {
      fail(hoopSystemError, context, ": ibv_post_recv: ", errnoText(error));
    }
    count -= batch;
  }
}

RdmaConnection::RdmaConnection(RdmaEndpoint endpoint)
    : memory_(std::move(endpoint.memory)),
      layout_(endpoint.layout),
      remoteLayout_(endpoint.remoteLayout),
      rails_(std::move(endpoint.rails)),
      queuePairs_(std::move(endpoint.queuePairs)),
      remoteRails_(std::move(endpoint.remoteRails)),
      selfRank_(endpoint.selfRank),
      peer_(std::move(endpoint.peer)),
      registry_(endpoint.registry),
      probeInterval_(endpoint.probeInterval),
      outbound_(remoteLayout_.slots()),
      inbound_(layout_.slots()),
      stagingBusy_(remoteLayout_.slots(), false),
      clearanceBusy_(RdmaLayout::kCtsEntries, false) {
  alwaysReady_ = UniqueFd(eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!alwaysReady_.valid()) fail(hoopSystemError, "eventfd: ", errnoText(errno));
  link_ = std::move(endpoint.link);
  if (const auto* tcp = dynamic_cast<const TcpConnection*>(link_.get())) {
    linkFd_ = tcp->streamFd(0);
  }
}

void RdmaConnection::checkLink() {
  if (linkFd_ < 0) return;
  // Looked at, never read: the link stays as the setup left it.
  char byte = 0;
  const ssize_t peeked = ::recv(linkFd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  const bool closed =
      peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  if (!closed) return;
  // The peer may have written its last messages and then ended normally since the last pass:
  // what it wrote before it went is here (its card acknowledged it before it let the process
  // go), so look once more before calling it gone.
  pollCompletions();
  progressSends();
  progressRecvs();
  if (!workPending()) return;
  fail(hoopRemoteError, "rank ", selfRank_, ": ", peer_,
       " closed its connection (its process ended: it exited, failed or was killed) while rank ",
       selfRank_, " was ", pendingWork());
}

RdmaConnection::~RdmaConnection() {
  // A send is complete once its bytes are queued, as over TCP once they are in the socket: like
  // a socket's close, going away must not lose them. Wait (briefly: the peer's card acknowledges
  // in microseconds) for the writes still unacknowledged; a dead peer is not waited for long.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (failure_.empty() && dataWritesOutstanding_ > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    try {
      if (!pollCompletions()) std::this_thread::yield();
    } catch (const Error&) {
      break;  // the peer is gone: nothing left to deliver to
    }
  }
  log(LogLevel::kInfo, LogSubsys::kNet, selfRank_, "rdma to ", peer_, ": ", rendezvousSends_,
      " message(s) written straight into registered buffers, ", rendezvousRecvs_, " received; ",
      inlineWrites_, " inline write(s), ", probesSent_, " probe(s)");
}

// ---- posting ----

uint64_t rdmaWorkId(RdmaWork kind, size_t queuePair, uint64_t value) {
  return static_cast<uint64_t>(kind) << 56 | static_cast<uint64_t>(queuePair) << 48 |
         (value & ((uint64_t{1} << 48) - 1));
}

bool RdmaConnection::post(size_t queuePair, ibv_send_wr& wr) {
  RdmaQueuePairState& q = queuePairs_[queuePair];
  if (q.sendsOutstanding >= q.sendDepth) return false;
  wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (const int error = ibv_post_send(q.qp.get(), &wr, &bad); error != 0) {
    fail(hoopRemoteError, "rank ", selfRank_, ": posting to ", peer_, " on ", railName(q.rail),
         " failed: ", errnoText(error), " (the connection is unusable)");
  }
  ++q.sendsOutstanding;
  if (carriesData(wr.wr_id)) ++dataWritesOutstanding_;
  return true;
}

bool RdmaConnection::carriesData(uint64_t wrId) {
  const auto kind = static_cast<RdmaWork>(wrId >> 56);
  return kind == RdmaWork::kSlotWrite || kind == RdmaWork::kStripe ||
         kind == RdmaWork::kClearToSend;
}

std::string RdmaConnection::railName(size_t rail) const {
  return str(rails_[rail]->device->name(), ":", static_cast<int>(rails_[rail]->local.port));
}

// ---- the public calls ----

uint64_t RdmaConnection::postSend(const void* data, size_t bytes, FrameTag tag) {
  if (sends_.posted - sends_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many sends in flight to ", peer_);
  }
  SendOp& op = sends_.at(sends_.posted);
  op = SendOp{};
  op.data = static_cast<const char*>(data);
  op.bytes = bytes;
  op.tag = tag;
  return sends_.posted++;
}

uint64_t RdmaConnection::postRecv(void* data, size_t bytes, FrameTag tag) {
  if (recvs_.posted - recvs_.completed >= kMaxInFlight) {
    fail(hoopInternalError, "rank ", selfRank_, ": too many receives in flight from ", peer_);
  }
  if (peek_.active) {
    fail(hoopInternalError, "rank ", selfRank_, ": postRecv from ", peer_,
         " while a peeked message is still held (call releasePeeked first)");
  }
  RecvOp& op = recvs_.at(recvs_.posted);
  op = RecvOp{};
  op.data = static_cast<char*>(data);
  op.bytes = bytes;
  op.tag = tag;
  return recvs_.posted++;
}

bool RdmaConnection::progress() {
  if (!failure_.empty()) throw Error(hoopRemoteError, failure_);
  try {
    drainEvents();
    bool moved = pollCompletions();
    moved |= progressSends();
    moved |= progressRecvs();
    moved |= sendCreditIfDue();
    noteMovement(moved);
    return moved;
  } catch (const Error& error) {
    if (error.code() == hoopRemoteError) failure_ = error.what();
    throw;
  }
}

void RdmaConnection::noteMovement(bool moved) {
  if (moved || !workPending()) {
    idleSince_ = {};
    idlePasses_ = 0;
    return;
  }
  // A spinning wait calls this millions of times: look at the clock now and then only.
  constexpr unsigned kIdlePassesPerClockRead = 1024;
  if (++idlePasses_ % kIdlePassesPerClockRead != 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (idleSince_ == std::chrono::steady_clock::time_point{}) {
    idleSince_ = now;
  } else if (now - idleSince_ >= probeInterval_) {
    checkLink();
    sendProbes();
    idleSince_ = now;
  }
}

void RdmaConnection::addWaitFds(std::vector<pollfd>& fds) {
  if (!failure_.empty() || !workPending()) return;
  try {
    checkLink();
  } catch (const Error& error) {
    failure_ = error.what();
    throw;
  }
  // About to sleep: the clock read costs nothing next to that, and a wait that sleeps between
  // passes would otherwise take long to count its way to a probe.
  idlePasses_ = 0;
  const auto now = std::chrono::steady_clock::now();
  if (idleSince_ == std::chrono::steady_clock::time_point{}) {
    idleSince_ = now;
  } else if (now - idleSince_ >= probeInterval_) {
    sendProbes();
    idleSince_ = now;
  }
  bool arrivedMeanwhile = false;
  for (auto& rail : rails_) {
    if (!rail->armed) {
      if (const int error = ibv_req_notify_cq(rail->cq.get(), 0); error != 0) {
        fail(hoopSystemError, "rank ", selfRank_, ": ibv_req_notify_cq: ", errnoText(error));
      }
      rail->armed = true;
      // A completion that came between the last poll and the arming raises no event: look once
      // more, and do not sleep if one did.
      arrivedMeanwhile |= pollRail(*rail) > 0;
    }
  }
  if (arrivedMeanwhile) {
    fds.push_back({alwaysReady_.get(), POLLIN, 0});
    return;
  }
  for (const auto& rail : rails_) fds.push_back({rail->channel->fd, POLLIN, 0});
  // Only the peer's end wakes a sleeper here (POLLRDHUP; hang-ups and errors always do).
  if (linkFd_ >= 0) fds.push_back({linkFd_, POLLRDHUP, 0});
}

// ---- completions ----

void RdmaConnection::drainEvents() {
  for (auto& rail : rails_) {
    if (!rail->armed) continue;
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    // The channel is non-blocking: no event yet leaves the queue armed.
    if (rail->device->verbs().getCqEvent(rail->channel.get(), &cq, &context) != 0) continue;
    rail->armed = false;
    if (++rail->unackedEvents >= kAckBatch) {
      rail->device->verbs().ackCqEvents(rail->cq.get(), rail->unackedEvents);
      rail->unackedEvents = 0;
    }
  }
}

bool RdmaConnection::pollCompletions() {
  size_t taken = 0;
  for (auto& rail : rails_) taken += pollRail(*rail);
  return taken > 0;
}

size_t RdmaConnection::pollRail(RdmaRail& rail) {
  size_t taken = 0;
  ibv_wc completions[kPollBatch];
  while (true) {
    const int count = ibv_poll_cq(rail.cq.get(), kPollBatch, completions);
    if (count < 0) {
      fail(hoopRemoteError, "rank ", selfRank_, ": polling the completion queue of ",
           rail.device->name(), " for ", peer_, " failed");
    }
    for (int i = 0; i < count; ++i) {
      if (completions[i].status == IBV_WC_SUCCESS) continue;
      // A queue pair in error flushes everything it held; the completion that says why may come
      // later in the batch (or, for an error at this side's responder, only as an event).
      const ibv_wc* cause = &completions[i];
      for (int j = i; j < count && cause->status == IBV_WC_WR_FLUSH_ERR; ++j) {
        if (completions[j].status != IBV_WC_SUCCESS) cause = &completions[j];
      }
      failCompletion(*cause);
    }
    for (int i = 0; i < count; ++i) handleCompletion(completions[i]);
    taken += static_cast<size_t>(count);
    if (count < kPollBatch) break;
  }
  if (taken > 0) repostReceives();
  return taken;
}

void RdmaConnection::repostReceives() {
  for (size_t q = 0; q < queuePairs_.size(); ++q) {
    RdmaQueuePairState& pair = queuePairs_[q];
    if (pair.recvsToRepost == 0) continue;
    postImmediateReceives(pair.qp.get(), q, pair.recvsToRepost,
                          str("rank ", selfRank_, ": receiving from ", peer_));
    pair.recvsToRepost = 0;
  }
}

void RdmaConnection::handleCompletion(const ibv_wc& wc) {
  const auto kind = static_cast<RdmaWork>(wc.wr_id >> 56);
  const size_t q = (wc.wr_id >> 48) & 0xff;
  const uint64_t value = wc.wr_id & ((uint64_t{1} << 48) - 1);
  if (q >= queuePairs_.size()) failGarbage("a completion of an unknown queue pair");
  RdmaQueuePairState& pair = queuePairs_[q];
  if (kind == RdmaWork::kRecv) {
    ++pair.recvsToRepost;
    if ((wc.wc_flags & IBV_WC_WITH_IMM) == 0) failGarbage("a message without an immediate");
    handleImmediate(ntohl(wc.imm_data), q);
    return;
  }
  --pair.sendsOutstanding;
  if (carriesData(wc.wr_id)) --dataWritesOutstanding_;
  switch (kind) {
    case RdmaWork::kSlotWrite: stagingBusy_[value % stagingBusy_.size()] = false; break;
    case RdmaWork::kClearToSend: clearanceBusy_[value % clearanceBusy_.size()] = false; break;
    case RdmaWork::kStripe: {
      SendOp& op = sends_.at(value);
      --op.writesOutstanding;
      if (op.stage == SendStage::kPosted && op.writesOutstanding == 0) op.done = true;
      break;
    }
    case RdmaWork::kProbe: pair.probing = false; break;
    case RdmaWork::kCredit:
    case RdmaWork::kRecv: break;
  }
}

void RdmaConnection::handleImmediate(uint32_t imm, size_t /*queuePair*/) {
  const auto decoded = unpackImm(imm);
  if (!decoded) failGarbage(str("an immediate of unknown kind (", imm >> kImmValueBits, ")"));
  switch (decoded->kind) {
    case ImmKind::kSlot:
      if (!inbound_.arrive(decoded->value)) {
        failGarbage(str("a slot written at position ", decoded->value, " while position ",
                        inbound_.head(), " is next"));
      }
      break;
    case ImmKind::kCredit:
      if (!outbound_.credit(decoded->value)) {
        failGarbage(str("a credit for ", decoded->value, " positions; ", outbound_.published(),
                        " were written"));
      }
      break;
    case ImmKind::kClearToSend: clearanceArrived(decoded->value); break;
    case ImmKind::kPart: partArrived(decoded->value); break;
  }
}

void RdmaConnection::failCompletion(const ibv_wc& wc) {
  const size_t q = (wc.wr_id >> 48) & 0xff;
  const size_t rail = q < queuePairs_.size() ? queuePairs_[q].rail : 0;
  const std::string status = rails_[rail]->device->verbs().wcStatusStr(wc.status);
  std::string meaning;
  switch (wc.status) {
    case IBV_WC_RETRY_EXC_ERR:
      meaning = "the peer stopped answering: it exited or was killed, or the link is down";
      break;
    case IBV_WC_RNR_RETRY_EXC_ERR: meaning = "the peer posted no receive in time"; break;
    case IBV_WC_REM_ACCESS_ERR:
      meaning = "the peer refused the write (a buffer deregistered while in use?)";
      break;
    case IBV_WC_WR_FLUSH_ERR: meaning = "the queue pair had already failed"; break;
    default: meaning = "the queue pair failed"; break;
  }
  const char* request = "a request";
  switch (static_cast<RdmaWork>(wc.wr_id >> 56)) {
    case RdmaWork::kSlotWrite: request = "writing a slot"; break;
    case RdmaWork::kCredit: request = "returning credits"; break;
    case RdmaWork::kClearToSend: request = "answering a rendezvous"; break;
    case RdmaWork::kStripe: request = "writing into a registered buffer"; break;
    case RdmaWork::kProbe: request = "probing the path"; break;
    case RdmaWork::kRecv: request = "receiving"; break;
  }
  std::string detail = str(status, " ", request, " on queue pair ", q, ": ", meaning);
  const std::string state = portState(rails_[rail]->device->name(), rails_[rail]->local.port);
  if (!state.empty() && state != "ACTIVE") detail += str("; the port is ", state);
  std::vector<ibv_qp*> ours;
  for (const RdmaQueuePairState& pair : queuePairs_) ours.push_back(pair.qp.get());
  const std::string events = rails_[rail]->device->takeEvents(ours);
  if (!events.empty()) detail += str("; device events: ", events);
  const std::string what = pendingWork();
  fail(hoopRemoteError, "rank ", selfRank_, ": RDMA to ", peer_, " failed on ", railName(rail),
       " (", detail, ")",
       what.empty() ? std::string() : str(" while rank ", selfRank_, " was ", what));
}

void RdmaConnection::failGarbage(const std::string& why) const {
  fail(hoopRemoteError, "rank ", selfRank_, ": garbage on the RDMA connection from ", peer_, " (",
       why, "); the connection is unusable");
}

// ---- sending ----

RdmaSlotHeader RdmaConnection::headerFor(FrameTag tag, size_t bytes, uint64_t ticket) const {
  RdmaSlotHeader header{};
  header.magic = RdmaSlotHeader::kMagic;
  header.version = RdmaSlotHeader::kVersion;
  header.kind = static_cast<uint8_t>(tag.kind);
  header.seq = tag.seq;
  header.callType = tag.call.type;
  header.callOp = tag.call.op;
  header.callRoot = tag.call.root;
  header.callCount = tag.call.count;
  header.position = outbound_.next();
  header.messageBytes = bytes;
  header.ticket = ticket;
  return header;
}

bool RdmaConnection::canWriteSlot(size_t dataBytes) const {
  if (!outbound_.hasRoom()) return false;
  const uint64_t position = outbound_.next();
  const RdmaQueuePairState& q = queuePairs_[queuePairOf(position)];
  if (q.sendsOutstanding >= q.sendDepth) return false;
  const bool inlined = RdmaLayout::kHeaderBytes + dataBytes <= q.maxInline;
  return inlined || !stagingBusy_[position % stagingBusy_.size()];
}

void RdmaConnection::writeSlot(RdmaSlotHeader header, const char* data, size_t bytes) {
  const uint64_t position = outbound_.next();
  const size_t q = queuePairOf(position);
  RdmaQueuePairState& pair = queuePairs_[q];
  RdmaRail& rail = *rails_[pair.rail];
  const RdmaRailInfo& remote = remoteRails_[pair.remoteRail];
  header.fragmentBytes = bytes;
  char* staging = block(layout_.outboundSlot(position));

  ibv_sge pieces[2] = {};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htonl(packImm(ImmKind::kSlot, position));
  wr.wr.rdma.remote_addr = remote.memoryAddress + remoteLayout_.inboundSlot(position);
  wr.wr.rdma.rkey = remote.memoryKey;
  wr.wr_id = rdmaWorkId(RdmaWork::kSlotWrite, q, position);
  wr.sg_list = pieces;
  const bool inlined = data != nullptr && RdmaLayout::kHeaderBytes + bytes <= pair.maxInline;
  if (inlined) {
    // The request carries the bytes: nothing of ours is read after the post.
    pieces[0] = {reinterpret_cast<uintptr_t>(&header), RdmaLayout::kHeaderBytes, 0};
    pieces[1] = {reinterpret_cast<uintptr_t>(data), static_cast<uint32_t>(bytes), 0};
    wr.num_sge = bytes > 0 ? 2 : 1;
    wr.send_flags = IBV_SEND_INLINE;
    ++inlineWrites_;
  } else {
    std::memcpy(staging, &header, sizeof(header));
    if (data != nullptr && bytes > 0) {
      std::memcpy(staging + RdmaLayout::kHeaderBytes, data, bytes);
    }
    pieces[0] = {reinterpret_cast<uintptr_t>(staging),
                 static_cast<uint32_t>(RdmaLayout::kHeaderBytes + bytes), rail.memory->lkey};
    wr.num_sge = 1;
    stagingBusy_[position % stagingBusy_.size()] = true;
  }
  if (!post(q, wr)) {
    fail(hoopInternalError, "rank ", selfRank_, ": no room to write a slot to ", peer_,
         " after canWriteSlot said there was");
  }
  outbound_.publish();
}

bool RdmaConnection::progressSends() {
  bool moved = false;
  while (sendCursor_ < sends_.posted) {
    const uint64_t ticket = sendCursor_;
    SendOp& op = sends_.at(ticket);
    if (op.stage == SendStage::kFresh) {
      op.stage = startRendezvous(op, ticket) ? SendStage::kAnnounce : SendStage::kFragments;
    }
    if (op.stage == SendStage::kAnnounce) {
      if (!canWriteSlot(0)) break;
      RdmaSlotHeader header = headerFor(op.tag, op.bytes, ticket);
      header.flags = RdmaSlotHeader::kAnnounce;
      writeSlot(header, nullptr, 0);
      op.stage = SendStage::kAwaitClearance;
      moved = true;
    }
    if (op.stage == SendStage::kAwaitClearance) break;
    if (op.stage == SendStage::kStripes) {
      moved |= postStripes(op, ticket);
      if (op.stage != SendStage::kPosted) break;
      ++sendCursor_;
      continue;
    }
    // Fragments: one slot each, the last one of a message may be short.
    while (!op.headerSent || op.sent < op.bytes) {
      const size_t fragment = std::min(remoteLayout_.slotBytes(), op.bytes - op.sent);
      if (!canWriteSlot(fragment)) break;
      RdmaSlotHeader header = headerFor(op.tag, op.bytes, ticket);
      header.fragmentOffset = op.sent;
      writeSlot(header, op.data + op.sent, fragment);
      op.sent += fragment;
      op.headerSent = true;
      moved = true;
    }
    if (!op.headerSent || op.sent < op.bytes) break;
    // Every byte is inline in a request or copied into staging: the buffer is the caller's again.
    op.stage = SendStage::kPosted;
    op.done = true;
    ++sendCursor_;
  }
  completeSends();
  return moved;
}

void RdmaConnection::completeSends() {
  while (sends_.completed < sends_.posted && sends_.at(sends_.completed).done) ++sends_.completed;
}

ibv_mr* RdmaConnection::userRegion(const void* data, size_t bytes, size_t rail) {
  if (registry_ == nullptr) return nullptr;
  const auto region = registry_->covering(data, bytes);
  if (!region) return nullptr;
  const std::shared_ptr<VerbsDevice>& device = rails_[rail]->device;
  MemoryRegistry::Attachment* attached = registry_->attachment(
      region->id, device.get(), [&]() -> std::unique_ptr<MemoryRegistry::Attachment> {
        // const_cast: the registration only pins the pages; hoop never writes a send buffer.
        void* base = const_cast<char*>(region->base);
        // Device memory goes to the card directly where GPUDirect RDMA allows (rdma_dmabuf.h).
        MemoryRegion registered =
            memoryKindOf(base) == MemoryKind::kDevice
                ? registerDeviceMemory(*device, base, region->bytes, kUserAccess)
                : registerMemory(*device, base, region->bytes, kUserAccess);
        return std::make_unique<RdmaAttachment>(device, std::move(registered));
      });
  return attached == nullptr ? nullptr : static_cast<RdmaAttachment*>(attached)->region();
}

bool RdmaConnection::startRendezvous(SendOp& op, uint64_t /*ticket*/) {
  if (op.bytes <= remoteLayout_.slotBytes()) return false;
  op.localKeys.clear();
  for (size_t q = 0; q < queuePairs_.size(); ++q) {
    ibv_mr* region = userRegion(op.data, op.bytes, queuePairs_[q].rail);
    if (region == nullptr) return false;
    op.localKeys.push_back(region->lkey);
  }
  return true;
}

void RdmaConnection::clearanceArrived(uint32_t ticketBits) {
  if (sendCursor_ >= sends_.posted) failGarbage("a clear-to-send no message waits for");
  const uint64_t ticket = sendCursor_;
  SendOp& op = sends_.at(ticket);
  if (op.stage != SendStage::kAwaitClearance || (ticket & kImmValueMask) != ticketBits) {
    failGarbage(
        str("a clear-to-send for message ", ticketBits, " while message ", ticket, " is next"));
  }
  std::memcpy(&op.clearance, block(layout_.inboundCts(ticket)), sizeof(op.clearance));
  const RdmaClearToSend& cts = op.clearance;
  if (cts.ticket != ticket + 1 || cts.bytes != op.bytes) {
    failGarbage(str("a clear-to-send for message ", cts.ticket - 1, " of ", cts.bytes,
                    " bytes; message ", ticket, " has ", op.bytes));
  }
  if (cts.accepted == 0) {
    op.stage = SendStage::kFragments;  // the receiver's buffer is not registered: stream
    return;
  }
  if (cts.rails != remoteRails_.size() || cts.address == 0) {
    failGarbage("a clear-to-send with a malformed destination");
  }
  op.stage = SendStage::kStripes;
  ++rendezvousSends_;
}

bool RdmaConnection::postStripes(SendOp& op, uint64_t ticket) {
  const size_t stripes = stripeCount(op.bytes, queuePairs_.size());
  const size_t stripe = stripeBytes(op.bytes, stripes);
  bool moved = false;
  while (op.nextStripe < stripes) {
    const size_t q = op.nextStripe;
    const RdmaQueuePairState& pair = queuePairs_[q];
    const size_t begin = q * stripe;
    const size_t end = std::min(op.bytes, begin + stripe);
    const size_t maxWrite = std::min<size_t>(kMaxWriteBytes, rails_[pair.rail]->maxMessageBytes);
    while (begin + op.stripeOffset < end) {
      const size_t offset = begin + op.stripeOffset;
      const size_t length = std::min(maxWrite, end - offset);
      const bool last = offset + length == end;
      ibv_sge piece{reinterpret_cast<uintptr_t>(op.data + offset), static_cast<uint32_t>(length),
                    op.localKeys[q]};
      ibv_send_wr wr{};
      wr.opcode = last ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
      if (last) wr.imm_data = htonl(packImm(ImmKind::kPart, ticket));
      wr.wr.rdma.remote_addr = op.clearance.address + offset;
      wr.wr.rdma.rkey = op.clearance.keys[pair.remoteRail];
      wr.wr_id = rdmaWorkId(RdmaWork::kStripe, q, ticket);
      wr.sg_list = &piece;
      wr.num_sge = 1;
      if (!post(q, wr)) return moved;
      ++op.writesOutstanding;
      op.stripeOffset += length;
      moved = true;
    }
    ++op.nextStripe;
    op.stripeOffset = 0;
  }
  op.stage = SendStage::kPosted;
  if (op.writesOutstanding == 0) op.done = true;
  return moved;
}

bool RdmaConnection::sendCreditIfDue() {
  if (!inbound_.creditDue()) return false;
  const size_t q = 0;  // credits stay in order on one queue pair
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(packImm(ImmKind::kCredit, inbound_.head()));
  wr.wr_id = rdmaWorkId(RdmaWork::kCredit, q, 0);
  wr.num_sge = 0;
  if (!post(q, wr)) return false;
  inbound_.takeCredit();
  return true;
}

void RdmaConnection::sendProbes() {
  for (size_t q = 0; q < queuePairs_.size(); ++q) {
    RdmaQueuePairState& pair = queuePairs_[q];
    if (pair.probing) continue;
    const RdmaRailInfo& remote = remoteRails_[pair.remoteRail];
    ibv_sge piece{reinterpret_cast<uintptr_t>(block(layout_.probeSource())), 8,
                  rails_[pair.rail]->memory->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.wr.rdma.remote_addr = remote.memoryAddress + remoteLayout_.probeTarget();
    wr.wr.rdma.rkey = remote.memoryKey;
    wr.wr_id = rdmaWorkId(RdmaWork::kProbe, q, 0);
    wr.sg_list = &piece;
    wr.num_sge = 1;
    if (post(q, wr)) {
      pair.probing = true;
      ++probesSent_;
    }
  }
}

// ---- zero-copy send ----

void* RdmaConnection::sendSlot(size_t bytes) {
  if (bytes > remoteLayout_.slotBytes() || sendCursor_ != sends_.posted ||
      sends_.posted - sends_.completed >= kMaxInFlight) {
    return nullptr;
  }
  const uint64_t position = outbound_.next();
  const RdmaQueuePairState& q = queuePairs_[queuePairOf(position)];
  if (!outbound_.hasRoom() || q.sendsOutstanding >= q.sendDepth ||
      stagingBusy_[position % stagingBusy_.size()]) {
    return nullptr;
  }
  return block(layout_.outboundSlot(position) + RdmaLayout::kHeaderBytes);
}

uint64_t RdmaConnection::publishSend(size_t bytes, FrameTag tag) {
  if (sendSlot(bytes) == nullptr) {
    fail(hoopInternalError, "rank ", selfRank_, ": publishSend of ", bytes, " bytes to ", peer_,
         " without a slot from sendSlot (or with a send posted since)");
  }
  const uint64_t ticket = sends_.posted++;
  writeSlot(headerFor(tag, bytes, ticket), nullptr, bytes);
  SendOp& op = sends_.at(ticket);
  op = SendOp{};
  op.bytes = bytes;
  op.tag = tag;
  op.stage = SendStage::kPosted;
  op.done = true;
  ++sendCursor_;
  completeSends();
  return ticket;
}

// ---- receiving ----

RdmaSlotHeader RdmaConnection::headSlotHeader() const {
  RdmaSlotHeader header;
  std::memcpy(&header, block(layout_.inboundSlot(inbound_.head())), sizeof(header));
  return header;
}

void RdmaConnection::releaseHeadSlot() { inbound_.release(); }

void RdmaConnection::checkHeader(const RdmaSlotHeader& header, const RecvOp& op) const {
  if (header.magic != RdmaSlotHeader::kMagic || header.version != RdmaSlotHeader::kVersion) {
    failGarbage("bad slot magic or version");
  }
  if (header.position != inbound_.head()) {
    failGarbage(str("slot of position ", header.position, " at position ", inbound_.head()));
  }
  if ((header.flags & ~RdmaSlotHeader::kAnnounce) != 0) failGarbage("unknown slot flags");
  const auto kind = static_cast<OpKind>(header.kind);
  const bool announce = (header.flags & RdmaSlotHeader::kAnnounce) != 0;
  if (op.fragments == 0) {
    if (header.fragmentOffset != 0) failGarbage("a message that starts at an offset");
    // Same texts as the other transports: what the user did wrong, not which transport saw it.
    if (kind != op.tag.kind || header.seq != op.tag.seq) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " is in ", opKindName(op.tag.kind), " #",
           op.tag.seq, " but ", peer_, " sent data for ", opKindName(kind), " #", header.seq,
           ": ranks called collectives in a different order");
    }
    const CallParams call{header.callCount, header.callType, header.callOp, header.callRoot};
    if (call != op.tag.call) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " called ",
           describeCall(op.tag.kind, op.tag.seq, op.tag.call), " but ", peer_, " called ",
           describeCall(kind, header.seq, call),
           ": every rank must make the same call with the same count, type, op and root");
    }
    if (header.messageBytes != op.bytes) {
      fail(hoopInvalidUsage, "rank ", selfRank_, " expected ", op.bytes, " bytes from ", peer_,
           " in ", opKindName(op.tag.kind), " #", op.tag.seq, " but got ", header.messageBytes,
           ": ranks passed different counts or datatypes");
    }
  } else if (kind != op.tag.kind || header.seq != op.tag.seq || header.messageBytes != op.bytes ||
             header.fragmentOffset != op.received || announce) {
    failGarbage("a fragment that does not continue its message");
  }
  if (announce) {
    if (header.fragmentBytes != 0 || op.bytes <= layout_.slotBytes()) {
      failGarbage("a malformed rendezvous announcement");
    }
    return;
  }
  const size_t due = std::min(layout_.slotBytes(), op.bytes - op.received);
  if (header.fragmentBytes != due) {
    failGarbage(str("a fragment of ", header.fragmentBytes, " bytes where ", due, " were due"));
  }
}

bool RdmaConnection::answerAnnouncement(RecvOp& op, const RdmaSlotHeader& header) {
  const uint64_t entry = header.ticket;
  const size_t q = 0;
  if (clearanceBusy_[entry % clearanceBusy_.size()] ||
      queuePairs_[q].sendsOutstanding >= queuePairs_[q].sendDepth) {
    return false;
  }
  RdmaClearToSend cts{};
  cts.ticket = header.ticket + 1;
  cts.bytes = op.bytes;
  cts.rails = static_cast<uint32_t>(rails_.size());
  cts.accepted = 1;
  for (size_t r = 0; r < rails_.size() && cts.accepted != 0; ++r) {
    ibv_mr* region = userRegion(op.data, op.bytes, r);
    if (region == nullptr) {
      cts.accepted = 0;
    } else {
      cts.keys[r] = region->rkey;
    }
  }
  if (cts.accepted != 0) cts.address = reinterpret_cast<uintptr_t>(op.data);
  char* staging = block(layout_.outboundCts(entry));
  std::memcpy(staging, &cts, sizeof(cts));
  const RdmaQueuePairState& pair = queuePairs_[q];
  const RdmaRailInfo& remote = remoteRails_[pair.remoteRail];
  ibv_sge piece{reinterpret_cast<uintptr_t>(staging), sizeof(cts), rails_[pair.rail]->memory->lkey};
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  wr.imm_data = htonl(packImm(ImmKind::kClearToSend, header.ticket));
  wr.wr.rdma.remote_addr = remote.memoryAddress + remoteLayout_.inboundCts(header.ticket);
  wr.wr.rdma.rkey = remote.memoryKey;
  wr.wr_id = rdmaWorkId(RdmaWork::kClearToSend, q, entry);
  wr.sg_list = &piece;
  wr.num_sge = 1;
  if (!post(q, wr)) return false;
  clearanceBusy_[entry % clearanceBusy_.size()] = true;
  if (cts.accepted != 0) {
    op.awaitingParts = true;
    op.senderTicket = header.ticket;
    op.partsExpected = static_cast<uint32_t>(stripeCount(op.bytes, queuePairs_.size()));
    ++rendezvousRecvs_;
  }
  return true;
}

void RdmaConnection::partArrived(uint32_t ticketBits) {
  if (recvs_.completed >= recvs_.posted) failGarbage("rendezvous data no receive waits for");
  RecvOp& op = recvs_.at(recvs_.completed);
  if (!op.awaitingParts || (op.senderTicket & kImmValueMask) != ticketBits ||
      op.partsArrived >= op.partsExpected) {
    failGarbage(str("rendezvous data of message ", ticketBits, " that was not cleared"));
  }
  ++op.partsArrived;
}

bool RdmaConnection::progressRecvs() {
  bool moved = false;
  while (recvs_.completed < recvs_.posted) {
    RecvOp& op = recvs_.at(recvs_.completed);
    if (op.awaitingParts) {
      if (op.partsArrived < op.partsExpected) break;
      op.received = op.bytes;
      ++recvs_.completed;
      moved = true;
      continue;
    }
    if (!inbound_.headArrived()) break;
    const RdmaSlotHeader header = headSlotHeader();
    checkHeader(header, op);
    if ((header.flags & RdmaSlotHeader::kAnnounce) != 0) {
      if (!answerAnnouncement(op, header)) break;
      ++op.fragments;
      releaseHeadSlot();
      moved = true;
      continue;  // awaiting its parts, or its fragments follow
    }
    if (header.fragmentBytes > 0) {
      std::memcpy(op.data + op.received,
                  block(layout_.inboundSlot(inbound_.head()) + RdmaLayout::kHeaderBytes),
                  header.fragmentBytes);
    }
    op.received += header.fragmentBytes;
    ++op.fragments;
    releaseHeadSlot();
    moved = true;
    if (op.received == op.bytes) ++recvs_.completed;
  }
  return moved;
}

std::optional<FrameTag> RdmaConnection::peekUnclaimed() {
  if (recvs_.completed != recvs_.posted || peek_.active || peek_.wanted) return std::nullopt;
  if (!inbound_.headArrived()) return std::nullopt;
  const RdmaSlotHeader header = headSlotHeader();
  // Garbage is for the receive that claims it to report, with its checks.
  if (header.magic != RdmaSlotHeader::kMagic || header.version != RdmaSlotHeader::kVersion ||
      header.fragmentOffset != 0) {
    return std::nullopt;
  }
  return FrameTag{static_cast<OpKind>(header.kind),
                  header.seq,
                  {header.callCount, header.callType, header.callOp, header.callRoot}};
}

// ---- zero-copy receive ----

const void* RdmaConnection::peekRecv(size_t bytes, FrameTag tag) {
  if (!failure_.empty()) throw Error(hoopRemoteError, failure_);
  if (peek_.active) {
    if (bytes != peek_.bytes || tag.kind != peek_.tag.kind || tag.seq != peek_.tag.seq) {
      fail(hoopInternalError, "rank ", selfRank_, ": peekRecv from ", peer_,
           " for another message while one is held (call releasePeeked first)");
    }
    return peek_.data;
  }
  if (recvs_.completed < recvs_.posted) {
    fail(hoopInternalError, "rank ", selfRank_, ": peekRecv from ", peer_,
         " while posted receives are pending (messages are consumed in order)");
  }
  if (!canPeek(bytes)) {
    fail(hoopInternalError, "rank ", selfRank_, ": peekRecv of ", bytes, " bytes from ", peer_,
         " cannot succeed: the message does not travel in one slot (check canPeek)");
  }
  if (!inbound_.headArrived()) {
    peek_.wanted = true;
    peek_.tag = tag;
    return nullptr;
  }
  RecvOp expected;
  expected.bytes = bytes;
  expected.tag = tag;
  const RdmaSlotHeader header = headSlotHeader();
  checkHeader(header, expected);
  if ((header.flags & RdmaSlotHeader::kAnnounce) != 0) {
    failGarbage("a rendezvous announcement for a message of one slot");
  }
  peek_ = Peek{true, false, block(layout_.inboundSlot(inbound_.head()) + RdmaLayout::kHeaderBytes),
               bytes, tag};
  return peek_.data;
}

void RdmaConnection::releasePeeked() {
  if (!peek_.active) {
    fail(hoopInternalError, "rank ", selfRank_, ": releasePeeked from ", peer_,
         " without a peeked message");
  }
  peek_.active = false;
  releaseHeadSlot();
  // The message counts as one receive, posted and completed, so tickets keep matching the peer's.
  ++recvs_.posted;
  ++recvs_.completed;
  sendCreditIfDue();
}

// ---- state for waits and messages ----

bool RdmaConnection::workPending() const {
  return sends_.completed < sends_.posted || recvs_.completed < recvs_.posted || peek_.wanted ||
         inbound_.creditDue();
}

std::string RdmaConnection::pendingWork() const {
  std::string what;
  if (recvs_.completed < recvs_.posted) {
    const FrameTag tag = recvs_.at(recvs_.completed).tag;
    what = str("waiting for ", opKindName(tag.kind), " #", tag.seq, " data from it");
  } else if (peek_.wanted) {
    what = str("waiting for ", opKindName(peek_.tag.kind), " #", peek_.tag.seq, " data from it");
  }
  if (sends_.completed < sends_.posted) {
    const FrameTag tag = sends_.at(sends_.completed).tag;
    what +=
        str(what.empty() ? "" : " and ", "sending ", opKindName(tag.kind), " #", tag.seq, " to it");
  }
  return what;
}

}  // namespace hoop

#endif  // HOOP_HAVE_VERBS
