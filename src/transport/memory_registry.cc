#include "transport/memory_registry.h"

#include "base/error.h"

namespace hoop {

uint64_t MemoryRegistry::add(const void* base, size_t bytes) {
  if (base == nullptr || bytes == 0) {
    fail(hoopInvalidArgument, "cannot register ", bytes, " bytes at ", base,
         ": a registered buffer needs an address and a size");
  }
  std::lock_guard lock(mutex_);
  uint64_t regionId = 0;
  for (auto& [id, entry] : regions_) {
    if (entry.region.base == base && entry.region.bytes == bytes) regionId = id;
  }
  if (regionId == 0) {
    regionId = nextId_++;
    regions_[regionId].region = {regionId, static_cast<const char*>(base), bytes};
  }
  ++regions_[regionId].handles;
  const uint64_t handle = nextId_++;
  handles_[handle] = regionId;
  return handle;
}

void MemoryRegistry::remove(uint64_t handle) {
  std::unique_ptr<Entry> gone;
  {
    std::lock_guard lock(mutex_);
    auto found = handles_.find(handle);
    if (found == handles_.end()) {
      fail(hoopInvalidArgument, "handle ", handle,
           " names no registered buffer (not returned by hoopCommRegister, or deregistered)");
    }
    auto region = regions_.find(found->second);
    handles_.erase(found);
    if (--region->second.handles == 0) {
      gone = std::make_unique<Entry>(std::move(region->second));
      regions_.erase(region);
    }
  }
  // The attachments (memory regions on devices) are released outside the lock.
}

std::optional<MemoryRegistry::Region> MemoryRegistry::covering(const void* data,
                                                               size_t bytes) const {
  const char* begin = static_cast<const char*>(data);
  std::lock_guard lock(mutex_);
  std::optional<Region> best;
  for (const auto& [id, entry] : regions_) {
    const Region& r = entry.region;
    const bool inside = begin >= r.base && bytes <= r.bytes &&
                        static_cast<size_t>(begin - r.base) <= r.bytes - bytes;
    if (inside && (!best || r.bytes < best->bytes)) best = r;
  }
  return best;
}

MemoryRegistry::Attachment* MemoryRegistry::attachment(
    uint64_t region, const void* domain, FunctionRef<std::unique_ptr<Attachment>()> make) {
  std::lock_guard lock(mutex_);
  auto found = regions_.find(region);
  if (found == regions_.end()) return nullptr;
  for (auto& [owner, attached] : found->second.attachments) {
    if (owner == domain) return attached.get();
  }
  found->second.attachments.emplace_back(domain, make());
  return found->second.attachments.back().second.get();
}

size_t MemoryRegistry::regionCount() const {
  std::lock_guard lock(mutex_);
  return regions_.size();
}

}  // namespace hoop
