// futex(2) on a 32-bit word in memory shared between processes. Not FUTEX_PRIVATE_FLAG: the
// private variant keys waiters by this process's address space, so a wake from the peer process
// (which maps the word at another address) would never find them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace hoop {

// Sleeps while `word` still holds `expected`, at most `timeout`. Returns false on timeout; true
// when woken, when the word already differed, or on a signal (callers re-check their condition).
bool futexWaitShared(const std::atomic<uint32_t>& word, uint32_t expected,
                     std::chrono::nanoseconds timeout);

// Wakes every process sleeping on `word`. Cannot fail on a mapped word, so it is safe in
// destructors.
void futexWakeShared(const std::atomic<uint32_t>& word) noexcept;

}  // namespace hoop
