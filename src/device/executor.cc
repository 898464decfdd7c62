#include "device/executor.h"

#include <array>
#include <atomic>

#include "base/error.h"
#include "device/cpu/host_executor.h"

namespace hoop {

namespace {

// Executors registered over the built-in ones, by memory kind (null: none).
std::array<std::atomic<Executor*>, kNumMemoryKinds> registered{};

std::atomic<Executor*>& slotFor(MemoryKind kind) { return registered[static_cast<size_t>(kind)]; }

}  // namespace

Executor& executorFor(MemoryKind kind) {
  if (Executor* executor = slotFor(kind).load(std::memory_order_acquire)) return *executor;
  if (kind == MemoryKind::kHost) {
    static HostExecutor host;
    return host;
  }
  fail(hoopInvalidUsage, "no executor serves ", memoryKindName(kind),
       " memory in this build of hoop");
}

ExecutorRegistration::ExecutorRegistration(MemoryKind kind, Executor& executor)
    : kind_(kind), previous_(slotFor(kind).exchange(&executor, std::memory_order_acq_rel)) {}

ExecutorRegistration::~ExecutorRegistration() {
  slotFor(kind_).store(previous_, std::memory_order_release);
}

}  // namespace hoop
