#include "device/emulated/ipc_handle.h"

#include <cstdint>
#include <cstring>

#include "base/error.h"
#include "device/emulated/device_segment.h"

namespace hoop::emulated {
namespace {

constexpr uint32_t kMagic = 0x554d4568;  // "hEMU" in little-endian memory
constexpr uint8_t kVersion = 1;
constexpr size_t kVersionAt = 4;
constexpr size_t kLengthAt = 5;
constexpr size_t kPidAt = 8;
constexpr size_t kBytesAt = 12;
constexpr size_t kNameAt = 20;
static_assert(kNameAt + kMaxSegmentName <= kDeviceIpcBytes);

constexpr const char* kNamePrefix = "/hoopemu-";

[[noreturn]] void refuse(const char* why) {
  fail(hoopInvalidArgument, "not an emulated device IPC handle (", why,
       "): it must come from exportMemory() of the emulated runtime in another process");
}

// Names create() makes: the prefix, then digits, lower-case hex and dashes only. Checked so a
// handle cannot point shm_open at anything else.
bool plausibleName(const std::string& name) {
  if (name.compare(0, std::strlen(kNamePrefix), kNamePrefix) != 0) return false;
  for (size_t i = std::strlen(kNamePrefix); i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

DeviceIpcHandle encodeHandle(const SegmentHandle& handle) {
  if (handle.name.empty() || handle.name.size() > kMaxSegmentName) {
    fail(hoopInternalError, "emulated segment name '", handle.name, "' does not fit an IPC handle");
  }
  DeviceIpcHandle out{};
  const uint64_t bytes = handle.bytes;
  const int32_t pid = handle.exporter;
  std::memcpy(out.data(), &kMagic, sizeof(kMagic));
  out[kVersionAt] = kVersion;
  out[kLengthAt] = static_cast<uint8_t>(handle.name.size());
  std::memcpy(out.data() + kPidAt, &pid, sizeof(pid));
  std::memcpy(out.data() + kBytesAt, &bytes, sizeof(bytes));
  std::memcpy(out.data() + kNameAt, handle.name.data(), handle.name.size());
  return out;
}

SegmentHandle decodeHandle(const DeviceIpcHandle& handle) {
  uint32_t magic = 0;
  std::memcpy(&magic, handle.data(), sizeof(magic));
  if (magic != kMagic) refuse("wrong magic word");
  if (handle[kVersionAt] != kVersion) refuse("unknown version");
  const size_t length = handle[kLengthAt];
  if (length == 0 || length > kMaxSegmentName) refuse("bad name length");
  int32_t pid = 0;
  uint64_t bytes = 0;
  std::memcpy(&pid, handle.data() + kPidAt, sizeof(pid));
  std::memcpy(&bytes, handle.data() + kBytesAt, sizeof(bytes));
  if (pid <= 0) refuse("bad exporter pid");
  if (bytes == 0) refuse("zero bytes");
  SegmentHandle out;
  out.name.assign(reinterpret_cast<const char*>(handle.data() + kNameAt), length);
  if (!plausibleName(out.name)) refuse("bad segment name");
  out.bytes = static_cast<size_t>(bytes);
  out.exporter = pid;
  return out;
}

}  // namespace hoop::emulated
