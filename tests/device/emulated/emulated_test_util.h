// Helpers for the emulated runtime's tests: the runtime itself, streams and events as RAII
// values, and a bounded wait so a broken stream fails a test instead of hanging it.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>

#include "device/device_runtime.h"

namespace hoop::testing {

// The process's runtime, which HOOP_DEVICE_EMULATION=1 (set by CMake) makes the emulation.
inline DeviceRuntime& emulation() {
  EXPECT_TRUE(deviceEmulated()) << "run with HOOP_DEVICE_EMULATION=1";
  return deviceRuntime();
}

class Stream {
 public:
  Stream() : stream_(emulation().createStream()) {}
  ~Stream() { emulation().destroyStream(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator DeviceStream() const { return stream_; }

 private:
  DeviceStream stream_;
};

class Event {
 public:
  Event() : event_(emulation().createEvent()) {}
  ~Event() { emulation().destroyEvent(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator DeviceEvent() const { return event_; }

 private:
  DeviceEvent event_;
};

// Polls `done` until it holds or `limit` passes; whether it held.
inline bool eventually(const std::function<bool()>& done,
                       std::chrono::milliseconds limit = std::chrono::seconds(2)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// A flag word as the host reads and writes it while streams use it.
inline uint32_t loadWord(const uint32_t& word) {
  return std::atomic_ref<uint32_t>(const_cast<uint32_t&>(word)).load(std::memory_order_acquire);
}
inline void storeWord(uint32_t& word, uint32_t value) {
  std::atomic_ref<uint32_t>(word).store(value, std::memory_order_release);
}

// Long enough that an operation which should be blocked would have run by then if it were not.
inline void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

}  // namespace hoop::testing
