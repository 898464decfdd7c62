// futex(2) on a 32-bit word in memory shared between processes. Not FUTEX_PRIVATE_FLAG: the
// private variant keys waiters by this process's address space, so a wake from the peer process
// (which maps the word at another address) would never find them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

namespace hoop {

// Sleeps while `word` still holds `expected`, at most `timeout`. Returns false on timeout; true
// when woken, when the word already differed, or on a signal (callers re-check their condition).
bool futexWaitShared(const std::atomic<uint32_t>& word, uint32_t expected,
                     std::chrono::nanoseconds timeout);

// One word to wait on and the value it held when last looked at.
struct FutexWatch {
  const std::atomic<uint32_t>* word;
  uint32_t expected;
};

// Sleeps until any word differs from its expected value (or is woken), at most `timeout`, in one
// futex_waitv(2) call (Linux 5.16+). Returns false when the kernel lacks it (ENOSYS) or on
// timeout, true otherwise; callers re-check their condition either way.
bool futexWaitAnyShared(const std::vector<FutexWatch>& watches, std::chrono::nanoseconds timeout);

// Wakes every process sleeping on `word` and returns how many it woke (0 when none was asleep on
// it yet). Cannot fail on a mapped word, so it is safe in destructors.
int futexWakeShared(const std::atomic<uint32_t>& word) noexcept;

}  // namespace hoop
