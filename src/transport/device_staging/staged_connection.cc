#include "transport/device_staging/staged_connection.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "base/error.h"
#include "transport/cuda_ipc/device_slots.h"

namespace hoop {
namespace {

size_t roundUp(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

uint32_t loadFlag(const uint32_t* flag) {
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(flag)).load(std::memory_order_acquire);
}

void storeFlag(uint32_t* flag, uint32_t value) {
  std::atomic_ref<uint32_t>(*flag).store(value, std::memory_order_release);
}

}  // namespace

StagedDeviceConnection::StagedDeviceConnection(DeviceCallQueue& queue, int peer, size_t slots,
                                               size_t slotBytes, std::unique_ptr<Connection> link,
                                               std::string peerName)
    : queue_(queue),
      peer_(peer),
      slots_(slots),
      slotBytes_(roundUp(slotBytes, kFlagStride)),
      link_(std::move(link)),
      peerName_(std::move(peerName)) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  flagBytes_ = roundUp(2 * flagBytesPerDirection(slots_), page);
  const size_t bytes = roundUp(flagBytes_ + 2 * slots_ * slotBytes_, page);
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (address == MAP_FAILED) {
    fail(hoopSystemError, "staging memory for device messages to ", peerName_, " (", bytes,
         " bytes): ", errnoText(errno));
  }
  memory_ = Mapping(address, bytes);
  for (size_t slot = 0; slot < slots_; ++slot) {
    storeFlag(flagOnHost(kOut, slot), kSlotEmpty);
    storeFlag(flagOnHost(kIn, slot), kSlotEmpty);
  }
  memoryOnDevice_ = static_cast<char*>(runtime().mapHost(address, bytes));
}

StagedDeviceConnection::~StagedDeviceConnection() {
  if (memoryOnDevice_ != nullptr) runtime().unmapHost(memory_.get());
}

size_t StagedDeviceConnection::hostFlagCount() const { return flagBytes_ / sizeof(uint32_t); }

uint32_t* StagedDeviceConnection::flagOnHost(Direction direction, size_t slot) const {
  return reinterpret_cast<uint32_t*>(static_cast<char*>(memory_.get()) +
                                     (direction * slots_ + slot) * kFlagStride);
}

uint32_t* StagedDeviceConnection::flagOnDevice(Direction direction, size_t slot) const {
  return reinterpret_cast<uint32_t*>(memoryOnDevice_ + (direction * slots_ + slot) * kFlagStride);
}

char* StagedDeviceConnection::slotOnHost(Direction direction, size_t slot) const {
  return static_cast<char*>(memory_.get()) + flagBytes_ + (direction * slots_ + slot) * slotBytes_;
}

char* StagedDeviceConnection::slotOnDevice(Direction direction, size_t slot) const {
  return memoryOnDevice_ + flagBytes_ + (direction * slots_ + slot) * slotBytes_;
}

void StagedDeviceConnection::queuePieces(Direction direction, size_t bytes, const FrameTag& tag) {
  // The same pieces the call queue enqueues on the streams (an empty message has none: it
  // moves nothing either way, and both sides know it is empty).
  std::lock_guard lock(mutex_);
  for (size_t done = 0; done < bytes;) {
    const size_t piece = std::min(slotBytes_, bytes - done);
    pieces_[direction].push_back({piece, tag});
    done += piece;
  }
}

uint64_t StagedDeviceConnection::postSend(const void* data, size_t bytes, FrameTag tag) {
  queuePieces(kOut, bytes, tag);
  if (bytes > 0) queue_.postSend(peer_, *this, data, bytes);
  return sendsPosted_++;
}

uint64_t StagedDeviceConnection::postRecv(void* data, size_t bytes, FrameTag tag) {
  queuePieces(kIn, bytes, tag);
  if (bytes > 0) queue_.postRecv(*this, data, bytes);
  return recvsPosted_++;
}

void StagedDeviceConnection::enqueueSendPiece(const char* data, size_t bytes, DeviceStream stream) {
  runtime().waitFlag(flagOnDevice(kOut, nextSendSlot_), kSlotEmpty | kSlotAborted, stream);
  runtime().copy(slotOnDevice(kOut, nextSendSlot_), data, bytes, stream);
  runtime().writeFlag(flagOnDevice(kOut, nextSendSlot_), kSlotFull, stream);
  nextSendSlot_ = (nextSendSlot_ + 1) % slots_;
}

void StagedDeviceConnection::enqueueRecvPiece(char* data, size_t bytes) {
  const DeviceStream stream = queue_.stream();
  runtime().waitFlag(flagOnDevice(kIn, nextRecvSlot_), kSlotFull | kSlotAborted, stream);
  runtime().copy(data, slotOnDevice(kIn, nextRecvSlot_), bytes, stream);
  runtime().writeFlag(flagOnDevice(kIn, nextRecvSlot_), kSlotEmpty, stream);
  nextRecvSlot_ = (nextRecvSlot_ + 1) % slots_;
}

bool StagedDeviceConnection::hasPendingPieces() const {
  std::lock_guard lock(mutex_);
  return !pieces_[kOut].empty() || !pieces_[kIn].empty();
}

void StagedDeviceConnection::addLinkWaitFds(std::vector<pollfd>& fds) { link_->addWaitFds(fds); }

bool StagedDeviceConnection::advanceSends() {
  bool moved = false;
  std::deque<Piece>& pieces = pieces_[kOut];
  // Sent pieces hand their slot back to the stream, in order.
  while (!pieces.empty() && pieces.front().posted &&
         link_->sendsCompleted() > pieces.front().ticket) {
    storeFlag(flagOnHost(kOut, firstPiece_[kOut] % slots_), kSlotEmpty);
    pieces.pop_front();
    ++firstPiece_[kOut];
    moved = true;
  }
  // The next ones go out once the stream has staged them; only a ring's worth at a time, as
  // the pieces after share their slots.
  const size_t window = std::min(pieces.size(), slots_);
  for (size_t i = 0; i < window; ++i) {
    Piece& piece = pieces[i];
    if (piece.posted) continue;
    const size_t slot = (firstPiece_[kOut] + i) % slots_;
    if (loadFlag(flagOnHost(kOut, slot)) != kSlotFull) break;
    piece.ticket = link_->postSend(slotOnHost(kOut, slot), piece.bytes, piece.tag);
    piece.posted = true;
    moved = true;
  }
  return moved;
}

bool StagedDeviceConnection::advanceRecvs() {
  bool moved = false;
  std::deque<Piece>& pieces = pieces_[kIn];
  while (!pieces.empty() && pieces.front().posted &&
         link_->recvsCompleted() > pieces.front().ticket) {
    storeFlag(flagOnHost(kIn, firstPiece_[kIn] % slots_), kSlotFull);
    pieces.pop_front();
    ++firstPiece_[kIn];
    moved = true;
  }
  // A receive lands in its slot once the stream has copied the slot's previous piece out.
  const size_t window = std::min(pieces.size(), slots_);
  for (size_t i = 0; i < window; ++i) {
    Piece& piece = pieces[i];
    if (piece.posted) continue;
    const size_t slot = (firstPiece_[kIn] + i) % slots_;
    if (loadFlag(flagOnHost(kIn, slot)) != kSlotEmpty) break;
    piece.ticket = link_->postRecv(slotOnHost(kIn, slot), piece.bytes, piece.tag);
    piece.posted = true;
    moved = true;
  }
  return moved;
}

bool StagedDeviceConnection::advance() {
  bool moved = link_->progress();
  std::lock_guard lock(mutex_);
  moved |= advanceSends();
  moved |= advanceRecvs();
  if (moved) link_->progress();
  return moved;
}

}  // namespace hoop
