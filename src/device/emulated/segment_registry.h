// Every emulated device allocation and imported mapping of this process, by address range: what
// kindOf() asks (any address inside one is device memory), and what owns the segments until
// release() / closeImported(). Process-global and thread-safe: streams, ranks and the caller's
// threads allocate and classify concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <string>

#include "device/emulated/device_segment.h"

namespace hoop::emulated {

// How a segment came to be mapped here: which call may undo it.
enum class SegmentRole : uint8_t { kAllocated, kImported };

class SegmentRegistry {
 public:
  // The one registry. Never destroyed: stream threads may still classify or touch memory while
  // the process exits, after static destructors have run.
  static SegmentRegistry& instance();

  // Takes ownership of `segment` (non-empty) and returns its address.
  void* add(DeviceSegment segment, SegmentRole role);
  // Removes the segment that starts at `data` with `role` and hands it back, so the caller
  // unmaps it outside the lock; nullopt when there is none.
  std::optional<DeviceSegment> remove(const void* data, SegmentRole role);
  // Whether `pointer` is inside any registered segment.
  bool contains(const void* pointer) const;

  struct Allocation {
    std::string name;
    size_t bytes = 0;
  };
  // The allocation (not an import) that starts exactly at `data`, if any.
  std::optional<Allocation> allocationAt(const void* data) const;

 private:
  struct Entry {
    DeviceSegment segment;
    SegmentRole role;
  };

  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Entry> entries_;  // by start address; ranges never overlap (mmap'd)
};

}  // namespace hoop::emulated
