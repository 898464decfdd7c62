#include "core/device_watch.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/clock.h"
#include "base/logging.h"
#include "transport/cuda_ipc/device_slots.h"

namespace hoop {
namespace {

// How often the watch looks while calls are outstanding, and while none are (it is woken when
// one is enqueued, so the idle period only bounds a missed wake).
constexpr auto kBusyPeriod = std::chrono::milliseconds(2);
constexpr auto kIdlePeriod = std::chrono::milliseconds(200);
// The descriptions of outstanding calls kept for messages: the oldest matter.
constexpr size_t kMostDescriptions = 256;
// A peer that exited is only this rank's failure once its streams stop moving: a peer may
// rightly finish and exit while this rank's last work, which no longer needs it, still runs.
constexpr auto kDeadPeerStall = std::chrono::milliseconds(500);
// How often a stalled watch asks for other ranks' failure notices (they ride the control plane).
constexpr auto kNoticePeriod = std::chrono::milliseconds(100);

}  // namespace

DeviceWatch::DeviceWatch(DeviceRuntime& runtime, std::chrono::milliseconds timeout, int rank)
    : runtime_(runtime), timeout_(timeout), rank_(rank), self_(str("rank ", rank)) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* address = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) {
    fail(hoopSystemError, self_, ": mmap of the device progress counter: ", errnoText(errno));
  }
  counterPage_ = Mapping(address, page);
  counterOnDevice_ = static_cast<uint32_t*>(runtime_.mapHost(address, page));
  thread_ = std::thread([this] { run(); });
}

DeviceWatch::~DeviceWatch() {
  stop();
  runtime_.unmapHost(counterPage_.get());
}

void DeviceWatch::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    flags_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t DeviceWatch::finished() const {
  const uint64_t enqueued = enqueued_.load(std::memory_order_acquire);
  const uint32_t counter = std::atomic_ref<uint32_t>(*static_cast<uint32_t*>(counterPage_.get()))
                               .load(std::memory_order_acquire);
  // The counter wraps at 32 bits and a replayed graph may push it past the calls enqueued.
  const auto behind = static_cast<int32_t>(counter - static_cast<uint32_t>(enqueued));
  return behind >= 0 ? enqueued : enqueued - static_cast<uint64_t>(-static_cast<int64_t>(behind));
}

void DeviceWatch::callEnqueued(std::string description) {
  {
    std::lock_guard lock(mutex_);
    const uint64_t index = enqueued_.load(std::memory_order_relaxed);
    if (pending_.size() < kMostDescriptions) pending_.emplace_back(index, std::move(description));
    enqueued_.store(index + 1, std::memory_order_release);
  }
  wake_.notify_all();
}

void DeviceWatch::watchConnection(uint32_t* flags, size_t count, Peer peer,
                                  const DeviceLedger* ledger) {
  std::lock_guard lock(mutex_);
  flags_.emplace_back(flags, count);
  peers_.push_back(std::move(peer));
  ledgers_.push_back(ledger);
}

void DeviceWatch::listenForNotices(std::function<std::optional<Error>()> poll) {
  std::lock_guard lock(mutex_);
  pollNotices_ = std::move(poll);
}

std::optional<Error> DeviceWatch::mismatchFromAPeer() const {
  for (size_t i = 0; i < ledgers_.size(); ++i) {
    if (ledgers_[i] == nullptr) continue;
    if (std::optional<LedgerMismatch> found = ledgers_[i]->mismatchFromPeer()) {
      return Error(hoopInvalidUsage,
                   str(self_, " called ", found->readerCall, " on device memory but ",
                       peers_[i].name, " called ", found->finderCall,
                       ": every rank must call the same collectives in the same order with the "
                       "same count, type and op; its waits were released and the communicator "
                       "failed"));
    }
  }
  return std::nullopt;
}

std::string DeviceWatch::whoLags() const {
  std::string lagging;
  std::string elsewhere;  // peers on other hosts: what they enqueued is not visible here
  for (size_t i = 0; i < ledgers_.size(); ++i) {
    if (ledgers_[i] == nullptr) {
      elsewhere += str(elsewhere.empty() ? "" : ", ", peers_[i].name);
      continue;
    }
    const DeviceLedger& ledger = *ledgers_[i];
    const uint64_t expected = ledger.ownRecvsPosted();
    const uint64_t sent = ledger.peerSendsPosted();
    if (sent < expected) {
      lagging += str(lagging.empty() ? "" : "; ", peers_[i].name, " has enqueued ", sent,
                     " of the ", expected,
                     " messages this rank waits for from it (it has not made the call, "
                     "or not all of it)");
    }
  }
  if (!lagging.empty()) return lagging;
  if (!elsewhere.empty()) {
    return str("no peer on this host lags; of the peers on other hosts (", elsewhere,
               ") one may not have made the call");
  }
  return "every peer has enqueued the messages this rank waits for: the device work itself "
         "does not progress";
}

std::optional<Error> DeviceWatch::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

std::optional<Error> DeviceWatch::checkPeers() {
  std::optional<Error> mismatch;
  {
    std::lock_guard lock(mutex_);
    if (!failure_) mismatch = mismatchFromAPeer();
  }
  if (mismatch) failWith(*mismatch);
  return failure();
}

void DeviceWatch::releaseEveryWait() {
  std::lock_guard lock(mutex_);
  for (const auto& [flags, count] : flags_) {
    for (size_t i = 0; i < count; ++i) {
      std::atomic_ref<uint32_t>(flags[i]).store(kSlotReleased, std::memory_order_release);
    }
  }
}

bool DeviceWatch::drainWithin(std::chrono::milliseconds limit, bool release) {
  const auto end = Clock::now() + limit;
  while (!drained()) {
    if (Clock::now() >= end) return false;
    if (release) releaseEveryWait();
    std::this_thread::sleep_for(kBusyPeriod);
  }
  return true;
}

void DeviceWatch::failWith(Error error) {
  {
    std::lock_guard lock(mutex_);
    if (failure_) return;
    failure_ = error;
  }
  log(LogLevel::kWarn, LogSubsys::kColl, rank_, error.what());
}

void DeviceWatch::run() {
  uint64_t lastFinished = 0;
  auto lastProgress = Clock::now();
  auto lastNoticePoll = lastProgress;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const bool busy = !drained();
    wake_.wait_for(lock, busy ? kBusyPeriod : kIdlePeriod);
    if (stopping_) break;
    // Whether or not this rank's streams still wait: a peer may have failed a call on a message
    // this rank's stream already sent.
    if (!failure_) {
      if (std::optional<Error> mismatch = mismatchFromAPeer()) {
        lock.unlock();
        failWith(*mismatch);
        lock.lock();
      }
    }
    const uint64_t done = finished();
    while (!pending_.empty() && pending_.front().first < done) pending_.erase(pending_.begin());
    if (done != lastFinished || drained()) {
      lastFinished = done;
      lastProgress = Clock::now();
      continue;
    }
    if (failure_) {
      // Released again and again until the streams have drained.
      lock.unlock();
      releaseEveryWait();
      lock.lock();
      continue;
    }
    const std::string waiting =
        pending_.empty() ? std::string("a call on device memory") : pending_.front().second;
    std::optional<Error> found;
    const bool stalled = Clock::now() - lastProgress > kDeadPeerStall;
    for (const Peer& peer : stalled ? peers_ : std::vector<Peer>{}) {
      if (peer.pid != 0 && kill(peer.pid, 0) != 0 && errno == ESRCH) {
        found = Error(hoopRemoteError, str(self_, ": ", peer.name, " exited while ", waiting,
                                           " was enqueued on device memory; its waits were "
                                           "released and the communicator failed"));
        break;
      }
    }
    if (!found && pollNotices_ && Clock::now() - lastProgress > kNoticePeriod &&
        Clock::now() - lastNoticePoll > kNoticePeriod) {
      lastNoticePoll = Clock::now();
      // Not under the watch's lock: the poll takes the communicator's operation lock.
      lock.unlock();
      std::optional<Error> noticed = pollNotices_();
      lock.lock();
      if (noticed) {
        found = Error(noticed->code(), str(noticed->what(),
                                           "; the waits of the work on device "
                                           "memory were released"));
      }
    }
    if (!found && Clock::now() - lastProgress > timeout_) {
      found = Error(hoopTimeout, str(self_, ": ", waiting,
                                     " on device memory did not finish within HOOP_TIMEOUT (",
                                     timeout_.count() / 1000.0, " s): ", whoLags(),
                                     "; its waits were released and the communicator failed"));
    }
    if (found) {
      lock.unlock();
      failWith(*found);
      releaseEveryWait();
      lock.lock();
    }
  }
}

}  // namespace hoop
