#include "device/emulated/emulated_event.h"

#include <atomic>
#include <cstdint>
#include <utility>

#include "base/error.h"

namespace hoop::emulated {

struct EmulatedEvent::Record {
  // 0 until the recording stream reaches the record; then 1, with a release store so the waiting
  // stream's acquire load sees every write the recording stream made before it.
  std::atomic<uint32_t> done{0};
};

DeviceEvent EmulatedEvent::create() { return new EmulatedEvent(); }

EmulatedEvent& EmulatedEvent::from(DeviceEvent event) {
  if (event == nullptr) fail(hoopInvalidArgument, "null event");
  return *static_cast<EmulatedEvent*>(event);
}

void EmulatedEvent::destroy(DeviceEvent event) noexcept {
  delete static_cast<EmulatedEvent*>(event);
}

StreamOperation EmulatedEvent::record() {
  auto record = std::make_shared<Record>();
  {
    std::lock_guard lock(mutex_);
    latest_ = {.record = record};
  }
  return [record] {
    record->done.store(1, std::memory_order_release);
    record->done.notify_all();
  };
}

void EmulatedEvent::recordCaptured(std::shared_ptr<Capture> capture, size_t signal) {
  std::lock_guard lock(mutex_);
  latest_ = {.capture = std::move(capture), .signal = signal};
}

EmulatedEvent::Latest EmulatedEvent::latest() {
  std::lock_guard lock(mutex_);
  return latest_;
}

StreamOperation EmulatedEvent::waitFor(std::shared_ptr<Record> record) {
  if (!record) return [] {};
  // atomic::wait sleeps in the kernel (a futex) until the recording stream's notify.
  return [record = std::move(record)] {
    while (record->done.load(std::memory_order_acquire) == 0) {
      record->done.wait(0, std::memory_order_acquire);
    }
  };
}

}  // namespace hoop::emulated
