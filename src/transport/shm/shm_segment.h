// A POSIX shared-memory segment mapped into this process, as an RAII value: the mapping is
// unmapped, and a name this process created but did not yet unlink is unlinked, on destruction.
// The descriptor is closed as soon as the mapping exists (the mapping keeps the memory alive).
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "base/mapping.h"

namespace hoop {

class ShmSegment {
 public:
  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept
      : mapping_(std::move(other.mapping_)),
        name_(std::move(other.name_)),
        linked_(std::exchange(other.linked_, false)) {}
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment() { unlink(); }

  // A new zero-filled segment of `bytes` under a random name "/hoop-<32 hex>" (O_EXCL, mode
  // 0600: private to this user and never someone else's file). Its pages are allocated now, so a
  // full /dev/shm fails here with a clear message, not with SIGBUS at the first touch later.
  // `shmDirectory` and `requiredFreeBytes` feed the free-space check (see checkShmSpace).
  static ShmSegment create(size_t bytes, const std::string& shmDirectory, size_t requiredFreeBytes);
  // Maps the peer's segment `name`, which must be exactly `bytes` long.
  static ShmSegment open(const std::string& name, size_t bytes);

  // Removes the name (once); the mapping stays valid. Called as soon as both sides have it
  // mapped, so a crash from then on leaves nothing behind in /dev/shm.
  void unlink();

  void* data() const { return mapping_.get(); }
  size_t size() const { return mapping_.size(); }
  const std::string& name() const { return name_; }

 private:
  Mapping mapping_;
  std::string name_;
  bool linked_ = false;  // this process created the name and has not unlinked it yet
};

// Reads one byte of every page of [address, address + bytes): what every mapping of a segment
// does at set-up (shm_segment.cc says why).
void readEveryPage(const void* address, size_t bytes);

// Fails fast (hoopSystemError) when the file system at `shmDirectory` has fewer than
// `requiredBytes` free, naming both numbers and the usual fixes.
void checkShmSpace(const std::string& shmDirectory, size_t requiredBytes);

}  // namespace hoop
