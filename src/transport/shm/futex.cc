#include "transport/shm/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

#include "base/error.h"

namespace hoop {
namespace {

long futex(const std::atomic<uint32_t>& word, int op, uint32_t value, const timespec* timeout) {
  // The kernel only reads the word (FUTEX_WAIT compares, FUTEX_WAKE uses its address as a key).
  auto* address = const_cast<uint32_t*>(reinterpret_cast<const uint32_t*>(&word));
  return syscall(SYS_futex, address, op, value, timeout, nullptr, 0);
}

}  // namespace

bool futexWaitShared(const std::atomic<uint32_t>& word, uint32_t expected,
                     std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return false;
  timespec relative{};
  relative.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  relative.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  if (futex(word, FUTEX_WAIT, expected, &relative) == 0) return true;
  switch (errno) {
    case ETIMEDOUT: return false;
    case EAGAIN:  // the word changed before we slept
    case EINTR: return true;
    default: fail(hoopSystemError, "futex wait: ", errnoText(errno));
  }
}

bool futexWaitAnyShared(const std::vector<FutexWatch>& watches, std::chrono::nanoseconds timeout) {
  if (watches.empty() || watches.size() > FUTEX_WAITV_MAX || timeout.count() <= 0) return false;
  futex_waitv waiters[FUTEX_WAITV_MAX] = {};
  for (size_t i = 0; i < watches.size(); ++i) {
    waiters[i].val = watches[i].expected;
    waiters[i].uaddr = reinterpret_cast<uintptr_t>(watches[i].word);
    waiters[i].flags = FUTEX_32;  // shared between processes: no private flag
  }
  // futex_waitv takes an absolute deadline on the clock named in its last argument.
  timespec deadline{};
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  long long nanoseconds = deadline.tv_nsec + timeout.count();
  deadline.tv_sec += static_cast<time_t>(nanoseconds / 1'000'000'000);
  deadline.tv_nsec = static_cast<long>(nanoseconds % 1'000'000'000);
  long woken = syscall(SYS_futex_waitv, waiters, watches.size(), 0, &deadline, CLOCK_MONOTONIC);
  if (woken >= 0) return true;
  switch (errno) {
    case ETIMEDOUT:
    case ENOSYS: return false;
    case EAGAIN:  // a word changed before we slept
    case EINTR: return true;
    default: fail(hoopSystemError, "futex_waitv: ", errnoText(errno));
  }
}

int futexWakeShared(const std::atomic<uint32_t>& word) noexcept {
  // FUTEX_WAKE fails only for an unmapped or misaligned address, which the segment rules out.
  const long woken = futex(word, FUTEX_WAKE, INT_MAX, nullptr);
  return woken > 0 ? static_cast<int>(woken) : 0;
}

}  // namespace hoop
