#include "transport/cuda_ipc/ipc_handle.h"

#include <algorithm>

#include "base/error.h"
#include "base/wire.h"

namespace hoop::cuda_ipc {
namespace {

constexpr uint32_t kMagic = 0x50494368;  // "hCIP" read as little-endian bytes
constexpr uint16_t kVersion = 1;
enum class Kind : uint8_t { kMemory = 1, kEvent = 2 };
constexpr size_t kHeaderBytes = 4 + 2 + 1 + 1;
constexpr size_t kMemoryBytes = kHeaderBytes + kIpcHandleBytes + 8 + 4 + 4;
constexpr size_t kEventBytes = kHeaderBytes + kIpcHandleBytes + 4;
// Device ordinals are small; anything beyond this is garbage, not a machine.
constexpr int32_t kMaxDeviceOrdinal = 1024;

const char* kindName(Kind kind) {
  return kind == Kind::kMemory ? "CUDA IPC memory handle" : "CUDA IPC event handle";
}

void writeHeader(WireWriter& out, Kind kind) {
  out.u32(kMagic);
  out.u16(kVersion);
  out.u8(static_cast<uint8_t>(kind));
  out.u8(0);  // reserved
}

// Checks the size and the header; leaves `in` at the first field.
void readHeader(WireReader& in, size_t size, size_t expected, Kind kind, int peer) {
  if (size != expected) {
    fail(hoopRemoteError, "rank ", peer, " sent a ", kindName(kind), " of ", size,
         " bytes, expected ", expected, " (another hoop version?)");
  }
  const uint32_t magic = in.u32();
  const uint16_t version = in.u16();
  const uint8_t got = in.u8();
  const uint8_t reserved = in.u8();
  if (magic != kMagic || version != kVersion || got != static_cast<uint8_t>(kind) ||
      reserved != 0) {
    fail(hoopRemoteError, "rank ", peer, " sent a malformed ", kindName(kind), " (magic 0x",
         std::hex, magic, std::dec, ", version ", version, ", kind ", static_cast<int>(got),
         "; expected version ", kVersion, ", kind ", static_cast<int>(kind), ")");
  }
}

IpcHandleBytes readHandle(WireReader& in, Kind kind, int peer) {
  IpcHandleBytes handle{};
  in.raw(handle.data(), handle.size());
  if (std::all_of(handle.begin(), handle.end(), [](uint8_t b) { return b == 0; })) {
    fail(hoopRemoteError, "rank ", peer, " sent an empty ", kindName(kind),
         " (all zero: never filled by CUDA)");
  }
  return handle;
}

void checkPid(uint32_t pid, Kind kind, int peer) {
  if (pid == 0)
    fail(hoopRemoteError, "rank ", peer, " sent a ", kindName(kind), " with owner pid 0");
}

}  // namespace

std::vector<uint8_t> encodeIpcMemory(const IpcMemoryDescriptor& descriptor) {
  WireWriter out;
  writeHeader(out, Kind::kMemory);
  out.raw(descriptor.handle.data(), descriptor.handle.size());
  out.u64(descriptor.bytes);
  out.u32(static_cast<uint32_t>(descriptor.device));
  out.u32(descriptor.ownerPid);
  return out.bytes();
}

std::vector<uint8_t> encodeIpcEvent(const IpcEventDescriptor& descriptor) {
  WireWriter out;
  writeHeader(out, Kind::kEvent);
  out.raw(descriptor.handle.data(), descriptor.handle.size());
  out.u32(descriptor.ownerPid);
  return out.bytes();
}

IpcMemoryDescriptor decodeIpcMemory(const void* data, size_t size, int peer) {
  WireReader in(data, size, kindName(Kind::kMemory));
  readHeader(in, size, kMemoryBytes, Kind::kMemory, peer);
  IpcMemoryDescriptor d;
  d.handle = readHandle(in, Kind::kMemory, peer);
  d.bytes = in.u64();
  d.device = static_cast<int32_t>(in.u32());
  d.ownerPid = in.u32();
  if (d.bytes == 0 || d.bytes > kMaxIpcBufferBytes) {
    fail(hoopRemoteError, "rank ", peer, " sent a CUDA IPC memory handle for ", d.bytes,
         " bytes (allowed: 1 to 2^48)");
  }
  if (d.device < 0 || d.device >= kMaxDeviceOrdinal) {
    fail(hoopRemoteError, "rank ", peer, " sent a CUDA IPC memory handle for device ", d.device);
  }
  checkPid(d.ownerPid, Kind::kMemory, peer);
  return d;
}

IpcEventDescriptor decodeIpcEvent(const void* data, size_t size, int peer) {
  WireReader in(data, size, kindName(Kind::kEvent));
  readHeader(in, size, kEventBytes, Kind::kEvent, peer);
  IpcEventDescriptor d;
  d.handle = readHandle(in, Kind::kEvent, peer);
  d.ownerPid = in.u32();
  checkPid(d.ownerPid, Kind::kEvent, peer);
  return d;
}

}  // namespace hoop::cuda_ipc
