#include "device/emulated/device_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "base/error.h"
#include "base/secret.h"
#include "base/unique_fd.h"

namespace hoop::emulated {
namespace {

size_t roundUpToPages(size_t bytes) {
  static const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// The pid and a per-process count make names unique among live processes; the random part
// keeps other users from guessing (and pre-creating) the next one.
std::string freshName() {
  static std::atomic<uint64_t> next{0};
  const Secret random = Secret::random();
  char name[kMaxSegmentName + 1];
  int length = std::snprintf(name, sizeof(name), "/hoopemu-%d-%llx-", static_cast<int>(getpid()),
                             static_cast<unsigned long long>(next.fetch_add(1)));
  if (length < 0 || static_cast<size_t>(length) + 16 > kMaxSegmentName) {
    fail(hoopInternalError, "emulated device memory: segment name too long");
  }
  std::string result(name, static_cast<size_t>(length));
  result += random.toHex().substr(0, 16);
  return result;
}

Mapping mapSegment(int fd, size_t bytes, const std::string& name) {
  const size_t mapped = roundUpToPages(bytes);
  void* address = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (address == MAP_FAILED) {
    fail(hoopSystemError, "mmap of emulated device memory ", name, " (", mapped,
         " bytes): ", errnoText(errno));
  }
  return Mapping(address, mapped);
}

}  // namespace

DeviceSegment& DeviceSegment::operator=(DeviceSegment&& other) noexcept {
  if (this != &other) {
    unlink();
    mapping_ = std::move(other.mapping_);
    name_ = std::move(other.name_);
    bytes_ = std::exchange(other.bytes_, 0);
    owner_ = std::exchange(other.owner_, 0);
  }
  return *this;
}

DeviceSegment DeviceSegment::create(size_t bytes) {
  DeviceSegment segment;
  segment.name_ = freshName();
  UniqueFd fd(shm_open(segment.name_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    fail(hoopSystemError, "shm_open(", segment.name_,
         ") for emulated device memory: ", errnoText(errno));
  }
  segment.owner_ = static_cast<int>(getpid());  // from here on a failure removes the name again
  segment.bytes_ = bytes;
  if (ftruncate(fd.get(), static_cast<off_t>(roundUpToPages(bytes))) != 0) {
    fail(hoopSystemError, "ftruncate of emulated device memory ", segment.name_, " to ", bytes,
         " bytes: ", errnoText(errno));
  }
  segment.mapping_ = mapSegment(fd.get(), bytes, segment.name_);
  return segment;
}

DeviceSegment DeviceSegment::open(const std::string& name, size_t bytes) {
  DeviceSegment segment;
  segment.name_ = name;
  UniqueFd fd(shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0));
  if (!fd.valid()) {
    fail(hoopSystemError, "shm_open(", name,
         ") to import emulated device memory: ", errnoText(errno));
  }
  struct stat info {};
  if (fstat(fd.get(), &info) != 0) {
    fail(hoopSystemError, "fstat of emulated device memory ", name, ": ", errnoText(errno));
  }
  if (static_cast<size_t>(info.st_size) < roundUpToPages(bytes)) {
    fail(hoopInvalidArgument, "emulated device memory ", name, " has ", info.st_size,
         " bytes, the handle promised ", bytes);
  }
  segment.bytes_ = bytes;
  segment.mapping_ = mapSegment(fd.get(), bytes, name);
  return segment;
}

void DeviceSegment::unlink() noexcept {
  if (owner_ != static_cast<int>(getpid())) return;
  owner_ = 0;
  // A failure leaves a file in /dev/shm and harms nothing running; there is no one to tell.
  shm_unlink(name_.c_str());
}

}  // namespace hoop::emulated
