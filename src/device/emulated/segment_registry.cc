#include "device/emulated/segment_registry.h"

#include <iterator>
#include <mutex>
#include <utility>

namespace hoop::emulated {

SegmentRegistry& SegmentRegistry::instance() {
  static auto* registry = new SegmentRegistry();
  return *registry;
}

void* SegmentRegistry::add(DeviceSegment segment, SegmentRole role) {
  void* data = segment.data();
  std::unique_lock lock(mutex_);
  entries_.emplace(reinterpret_cast<uintptr_t>(data), Entry{std::move(segment), role});
  return data;
}

std::optional<DeviceSegment> SegmentRegistry::remove(const void* data, SegmentRole role) {
  std::unique_lock lock(mutex_);
  auto found = entries_.find(reinterpret_cast<uintptr_t>(data));
  if (found == entries_.end() || found->second.role != role) return std::nullopt;
  DeviceSegment segment = std::move(found->second.segment);
  entries_.erase(found);
  return segment;
}

bool SegmentRegistry::contains(const void* pointer) const {
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  std::shared_lock lock(mutex_);
  // The last segment starting at or before `address` is the only one that can contain it.
  auto after = entries_.upper_bound(address);
  if (after == entries_.begin()) return false;
  const auto& [start, entry] = *std::prev(after);
  return address - start < entry.segment.bytes();
}

std::optional<SegmentRegistry::Allocation> SegmentRegistry::allocationAt(const void* data) const {
  std::shared_lock lock(mutex_);
  auto found = entries_.find(reinterpret_cast<uintptr_t>(data));
  if (found == entries_.end() || found->second.role != SegmentRole::kAllocated) return std::nullopt;
  return Allocation{found->second.segment.name(), found->second.segment.bytes()};
}

}  // namespace hoop::emulated
