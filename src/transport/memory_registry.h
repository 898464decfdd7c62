// Buffers the user registered with a communicator (hoopCommRegister), and what each transport
// made of them: a memory region on each RDMA device, made on the first message that uses the
// buffer there and kept until hoopCommDeregister. A message whose buffer lies inside a
// registered one can then move straight between the two ranks' buffers, with no copy through
// the transport's slots and no registration on the message's path.
//
// Only registered buffers are used that way: a buffer the user freed and allocated again at the
// same address would leave a region pinned to the old pages, so hoop never keeps a registration
// the user did not ask for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "base/function_ref.h"

namespace hoop {

class MemoryRegistry {
 public:
  // What a transport keeps for one registered buffer on one of its devices.
  class Attachment {
   public:
    virtual ~Attachment() = default;
  };

  struct Region {
    uint64_t id = 0;
    const char* base = nullptr;
    size_t bytes = 0;
  };

  // Registers [base, base + bytes) and returns a handle for remove(). Registering the same range
  // again shares its region (and whatever transports attached to it), counted once per handle.
  // Throws hoopInvalidArgument for a null or empty range.
  uint64_t add(const void* base, size_t bytes);
  // Throws hoopInvalidArgument for a handle add() did not return (or already removed). The
  // region and its attachments go with its last handle.
  void remove(uint64_t handle);

  // The registered region that holds all of [data, data + bytes), if any (the smallest, when
  // several do).
  std::optional<Region> covering(const void* data, size_t bytes) const;
  // The attachment of `region` for `domain` (a device), made by `make` on the first call for
  // that pair and kept until the region is removed. nullptr when the region is gone.
  Attachment* attachment(uint64_t region, const void* domain,
                         FunctionRef<std::unique_ptr<Attachment>()> make);

  size_t regionCount() const;

 private:
  struct Entry {
    Region region;
    size_t handles = 0;
    std::vector<std::pair<const void*, std::unique_ptr<Attachment>>> attachments;
  };

  mutable std::mutex mutex_;
  uint64_t nextId_ = 1;
  std::map<uint64_t, Entry> regions_;     // by region id
  std::map<uint64_t, uint64_t> handles_;  // handle -> region id
};

}  // namespace hoop
