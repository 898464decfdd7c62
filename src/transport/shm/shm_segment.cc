#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "base/error.h"
#include "base/secret.h"
#include "transport/tcp/socket.h"

namespace hoop {

// Reads one byte of every page. MAP_POPULATE fills this process's page tables, yet on some
// virtual machines a process's first access to each page still costs microseconds, whichever
// process touched it before (build/bin/hoop-page-first-access measures a host), and a call that
// reaches new pages pays it inside the collective: spread small messages for hundreds of calls,
// and larger messages, which reach deeper into their slots, at the first calls of each new size.
// Read here, the cost moves to set-up, where it is paid once per connection, and is negligible
// where a first access is cheap (docs/design-notes.md, "Measurements behind the defaults").
void readEveryPage(const void* address, size_t bytes) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Volatile, so the reads happen; what they read does not matter (the peer may be writing).
  const volatile uint8_t* base = static_cast<const uint8_t*>(address);
  uint8_t seen = 0;
  for (size_t offset = 0; offset < bytes; offset += page) seen ^= base[offset];
  static_cast<void>(seen);
}

namespace {

// 128 random bits: unguessable by other users' processes, and never reused.
std::string randomSegmentName() { return "/hoop-" + Secret::random().toHex(); }

std::string mebibytes(size_t bytes) {
  return str(bytes, " bytes (", (bytes + (1 << 20) - 1) >> 20, " MiB)");
}

[[noreturn]] void failNoSpace(const std::string& shmDirectory, size_t required,
                              const std::string& available) {
  fail(hoopSystemError, "not enough shared memory: hoop's shared-memory transport needs ",
       mebibytes(required), " in ", shmDirectory, " for this pair of ranks, but ", available,
       ". Give the container more (docker run --shm-size=1g, or a larger /dev/shm), or use fewer "
       "or smaller slots (HOOP_SHM_SLOTS, HOOP_SHM_SLOT_SIZE)");
}

// Mapped with every page in place, then read. The creator's posix_fallocate has already given
// the segment its pages, so this takes no more memory: it only fills this process's page tables
// now. Left to the first touch, each page costs a fault inside a collective the first time a
// message lands on it, and spread messages (ShmOptions::spreadBytes) reach new pages for hundreds
// of calls, each several times slower than once every page has been touched.
Mapping mapShared(int fd, size_t bytes, const std::string& name) {
  void* address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (address == MAP_FAILED) {
    fail(hoopSystemError, "mmap of shared-memory segment ", name, " (", bytes,
         " bytes): ", errnoText(errno));
  }
  readEveryPage(address, bytes);
  return Mapping(address, bytes);
}

}  // namespace

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    unlink();
    mapping_ = std::move(other.mapping_);
    name_ = std::move(other.name_);
    linked_ = std::exchange(other.linked_, false);
  }
  return *this;
}

void checkShmSpace(const std::string& shmDirectory, size_t requiredBytes) {
  struct statvfs info {};
  if (statvfs(shmDirectory.c_str(), &info) != 0) {
    // No such directory (not Linux glibc?): shm_open itself will say what is wrong.
    return;
  }
  auto available = static_cast<size_t>(info.f_bavail) * static_cast<size_t>(info.f_frsize);
  if (available < requiredBytes) {
    failNoSpace(shmDirectory, requiredBytes, "only " + mebibytes(available) + " are free");
  }
}

ShmSegment ShmSegment::create(size_t bytes, const std::string& shmDirectory,
                              size_t requiredFreeBytes) {
  checkShmSpace(shmDirectory, requiredFreeBytes);
  ShmSegment segment;
  UniqueFd fd;
  for (int attempt = 0; !fd.valid(); ++attempt) {
    segment.name_ = randomSegmentName();
    fd.reset(shm_open(segment.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    // EEXIST needs a 128-bit collision, or someone guessing names: try a fresh one, a few times.
    if (!fd.valid() && (errno != EEXIST || attempt >= 3)) {
      fail(hoopSystemError, "shm_open(", segment.name_, "): ", errnoText(errno));
    }
  }
  segment.linked_ = true;  // from here on, the destructor removes the name if anything fails
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) {
    fail(hoopSystemError, "ftruncate of shared-memory segment ", segment.name_, " to ", bytes,
         " bytes: ", errnoText(errno));
  }
  // tmpfs hands out pages lazily: without this, a /dev/shm that filled up since the check above
  // (other ranks, other jobs) would surface as SIGBUS on some later write into the ring.
  int error = posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes));
  if (error == ENOSPC) failNoSpace(shmDirectory, bytes, "allocating it failed (ENOSPC)");
  if (error != 0 && error != EOPNOTSUPP && error != EINVAL) {
    fail(hoopSystemError, "allocating shared-memory segment ", segment.name_, ": ",
         errnoText(error));
  }
  segment.mapping_ = mapShared(fd.get(), bytes, segment.name_);
  return segment;
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  ShmSegment segment;
  segment.name_ = name;
  UniqueFd fd(shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0));
  if (!fd.valid()) fail(hoopSystemError, "shm_open(", name, "): ", errnoText(errno));
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) {
    fail(hoopSystemError, "fstat of shared-memory segment ", name, ": ", errnoText(errno));
  }
  if (static_cast<size_t>(info.st_size) != bytes) {
    fail(hoopRemoteError, "shared-memory segment ", name, " has ", info.st_size,
         " bytes, expected ", bytes);
  }
  segment.mapping_ = mapShared(fd.get(), bytes, name);
  return segment;
}

void ShmSegment::unlink() {
  if (!linked_) return;
  linked_ = false;
  // Failure leaves a file in /dev/shm but harms nothing running; there is no one to tell.
  shm_unlink(name_.c_str());
}

}  // namespace hoop
