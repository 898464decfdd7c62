// The emulation's device memory: one named POSIX shared-memory segment, mapped into this process,
// as an RAII value. Shared memory rather than malloc so that another process of the host can map
// the same pages (exportMemory / importMemory), as CUDA IPC maps a peer's device allocation.
//
// The creator owns the name and unlinks it when the segment is destroyed (release()); an importer
// only maps it. Either way the descriptor is closed once the mapping exists: the mapping alone
// keeps the pages alive.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "base/mapping.h"

namespace hoop::emulated {

class DeviceSegment {
 public:
  DeviceSegment() = default;
  DeviceSegment(DeviceSegment&& other) noexcept
      : mapping_(std::move(other.mapping_)),
        name_(std::move(other.name_)),
        bytes_(std::exchange(other.bytes_, 0)),
        owner_(std::exchange(other.owner_, 0)) {}
  DeviceSegment& operator=(DeviceSegment&& other) noexcept;
  DeviceSegment(const DeviceSegment&) = delete;
  DeviceSegment& operator=(const DeviceSegment&) = delete;
  ~DeviceSegment() { unlink(); }

  // A new zero-filled segment of at least `bytes` (> 0) under a fresh name
  // "/hoopemu-<pid>-<n>-<16 hex>" (not "hoop-": the host transport's segments, which leak checks
  // look for) (O_EXCL, mode 0600), mapped page-aligned. The mapping covers whole pages; `bytes` is
  // what the allocation promised.
  static DeviceSegment create(size_t bytes);
  // Maps the segment another process created as `name` with `bytes` bytes; it must still be that
  // long (a name reused for something smaller would fault on access, so it is refused here).
  static DeviceSegment open(const std::string& name, size_t bytes);

  void* data() const { return mapping_.get(); }
  // The bytes asked for at creation (the mapping itself is rounded up to pages).
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }

 private:
  void unlink() noexcept;

  Mapping mapping_;
  std::string name_;
  size_t bytes_ = 0;
  // The pid that created the name and unlinks it (0: none). A pid, not a flag: a fork()ed child
  // inherits the parent's segments, and must not remove the names the parent still exports.
  int owner_ = 0;
};

// The longest name create() makes, without a terminating NUL: what the IPC handle must hold.
inline constexpr size_t kMaxSegmentName = 44;

}  // namespace hoop::emulated
