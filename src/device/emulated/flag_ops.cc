#include "device/emulated/flag_ops.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "base/error.h"

namespace hoop::emulated {
namespace {

// The flag is const for waitFlag's caller, but atomic_ref needs a mutable object; a load does not
// write through it.
std::atomic_ref<uint32_t> word(const uint32_t* flag) {
  return std::atomic_ref<uint32_t>(*const_cast<uint32_t*>(flag));
}

constexpr int kSpins = 200;
constexpr int kYields = 50;
constexpr auto kSleepStep = std::chrono::microseconds(50);

}  // namespace

void checkFlag(const void* flag, const char* operation) {
  const auto address = reinterpret_cast<uintptr_t>(flag);
  if (flag == nullptr || address % std::atomic_ref<uint32_t>::required_alignment != 0) {
    fail(hoopInvalidArgument, operation, ": flag ", flag, " is not an aligned 32-bit word");
  }
}

void storeFlag(uint32_t* flag, uint32_t value) {
  word(flag).store(value, std::memory_order_release);
}

void waitFlagSet(const uint32_t* flag, uint32_t mask) {
  const auto set = [&] { return (word(flag).load(std::memory_order_acquire) & mask) != 0; };
  for (int i = 0; i < kSpins; ++i) {
    if (set()) return;
  }
  for (int i = 0; i < kYields; ++i) {
    if (set()) return;
    std::this_thread::yield();
  }
  while (!set()) std::this_thread::sleep_for(kSleepStep);
}

void incrementCounter(uint32_t* counter) { word(counter).fetch_add(1, std::memory_order_acq_rel); }

}  // namespace hoop::emulated
