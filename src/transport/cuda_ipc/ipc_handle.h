// CUDA IPC handles as they travel between ranks of one host: a peer's exported device buffer (or
// event) described in a few bytes that hoop's existing connections carry during setup. The bytes
// come from another process, so decoding checks everything before anything is used: size, magic,
// version, kind, and the fields' ranges. No CUDA types here: this part builds and is tested
// everywhere.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hoop::cuda_ipc {

// CUDA_IPC_HANDLE_SIZE: cudaIpcMemHandle_t and cudaIpcEventHandle_t are both 64 opaque bytes.
inline constexpr size_t kIpcHandleBytes = 64;
using IpcHandleBytes = std::array<uint8_t, kIpcHandleBytes>;

// Largest buffer a descriptor may claim: far above any GPU's memory, and a bound that keeps
// offset arithmetic on the receiving side from overflowing.
inline constexpr uint64_t kMaxIpcBufferBytes = uint64_t{1} << 48;

struct IpcMemoryDescriptor {
  IpcHandleBytes handle{};  // cudaIpcGetMemHandle's bytes
  uint64_t bytes = 0;       // the exported allocation's size: all the peer may touch
  int32_t device = 0;       // the exporter's device ordinal (its view; for messages and checks)
  uint32_t ownerPid = 0;    // the exporter's pid: a process cannot open its own handle
};

struct IpcEventDescriptor {
  IpcHandleBytes handle{};  // cudaIpcGetEventHandle's bytes
  uint32_t ownerPid = 0;
};

// Encodings, little-endian: magic "hCIP", version, kind, then the fields.
std::vector<uint8_t> encodeIpcMemory(const IpcMemoryDescriptor& descriptor);
std::vector<uint8_t> encodeIpcEvent(const IpcEventDescriptor& descriptor);

// Throw hoop::Error(hoopRemoteError) naming `peer` when the bytes are not exactly one valid
// descriptor of that kind.
IpcMemoryDescriptor decodeIpcMemory(const void* data, size_t size, int peer);
IpcEventDescriptor decodeIpcEvent(const void* data, size_t size, int peer);

}  // namespace hoop::cuda_ipc
