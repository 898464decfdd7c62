// memoryKindOf: the driver's cuPointerGetAttribute, found with dlopen(RTLD_NOLOAD) so that only a
// process that has already loaded libcuda ever asks it (see memory_kind.h for why not the runtime).
#include "device/cuda/memory_kind.h"

#include <dlfcn.h>
#include <link.h>
#include <time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace hoop {
namespace {

// The driver API's numbers (cuda.h), part of its stable ABI; spelled out so that builds without
// the CUDA headers classify pointers too.
constexpr int kCudaSuccess = 0;
constexpr int kAttributeMemoryType = 2;    // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
constexpr int kAttributeIsManaged = 8;     // CU_POINTER_ATTRIBUTE_IS_MANAGED
constexpr unsigned kMemoryTypeDevice = 2;  // CU_MEMORYTYPE_DEVICE

// CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr)
using PointerGetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);

// The loader's count of objects loaded so far (dlpi_adds): when it has not moved since the last
// look, libcuda cannot have appeared, and the slow dlopen probe (tens of microseconds: a miss
// searches the library path) is skipped.
unsigned long long objectsLoaded() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t size, void* out) -> int {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) {
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        }
        return 1;  // every entry carries the same counter: the first is enough
      },
      &adds);
  return adds;
}

class LoadedDriver {
 public:
  // The driver's cuPointerGetAttribute once libcuda is in the process, else nullptr.
  PointerGetAttribute find() {
    if (PointerGetAttribute known = function_.load(std::memory_order_acquire)) return known;
    // Even the loader's count is not free (it takes the loader's lock), and every collective asks
    // for its buffers: look at most once per tick of the coarse clock (a few milliseconds; reading
    // it is a load from the vDSO page). Loading libcuda, creating a context and allocating device
    // memory take far longer than a tick, so no device buffer can reach a call before the probe has
    // seen the driver.
    const long tick = coarseTick();
    if (tick == lastTick_.load(std::memory_order_relaxed)) return nullptr;
    lastTick_.store(tick, std::memory_order_relaxed);
    const unsigned long long loaded = objectsLoaded();
    std::lock_guard<std::mutex> lock(mutex_);
    if (PointerGetAttribute known = function_.load(std::memory_order_relaxed)) return known;
    if (probed_ && loaded == probedAt_) return nullptr;
    probed_ = true;
    probedAt_ = loaded;
    // RTLD_NOLOAD: a handle only if libcuda is already loaded; the reference it takes keeps the
    // driver (and the cached function) in place for the life of the process.
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) return nullptr;
    auto* function = reinterpret_cast<PointerGetAttribute>(dlsym(handle, "cuPointerGetAttribute"));
    if (function == nullptr) {
      dlclose(handle);
      return nullptr;
    }
    function_.store(function, std::memory_order_release);
    return function;
  }

 private:
  static long coarseTick() {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    return static_cast<long>(now.tv_sec) * 1'000'000'000L + now.tv_nsec;
  }

  std::atomic<PointerGetAttribute> function_{nullptr};
  std::atomic<long> lastTick_{-1};
  std::mutex mutex_;
  bool probed_ = false;
  unsigned long long probedAt_ = 0;
};

LoadedDriver& loadedDriver() {
  static LoadedDriver driver;
  return driver;
}

}  // namespace

bool cudaDriverLoaded() { return loadedDriver().find() != nullptr; }

MemoryKind memoryKindOf(const void* pointer) {
  if (pointer == nullptr) return MemoryKind::kHost;
  const PointerGetAttribute getAttribute = loadedDriver().find();
  if (getAttribute == nullptr) return MemoryKind::kHost;
  const auto address = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(pointer));
  // Memory CUDA does not know gives CUDA_ERROR_INVALID_VALUE, a driver nobody initialised gives
  // CUDA_ERROR_NOT_INITIALIZED: both mean host memory. Neither leaves state behind.
  unsigned type = 0;
  if (getAttribute(&type, kAttributeMemoryType, address) != kCudaSuccess) return MemoryKind::kHost;
  if (type != kMemoryTypeDevice) return MemoryKind::kHost;  // pinned or registered host memory
  unsigned managed = 0;  // the driver writes a bool-sized flag: start from zero
  if (getAttribute(&managed, kAttributeIsManaged, address) == kCudaSuccess && managed != 0) {
    return MemoryKind::kManaged;
  }
  return MemoryKind::kDevice;
}

}  // namespace hoop
