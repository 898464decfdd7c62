// CUDA IPC descriptors on the wire: round trips, and every malformed input a peer could send is
// refused with hoopRemoteError naming the peer, before any field is used.
#include "transport/cuda_ipc/ipc_handle.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace hoop::cuda_ipc {
namespace {

IpcMemoryDescriptor sampleMemory() {
  IpcMemoryDescriptor d;
  for (size_t i = 0; i < d.handle.size(); ++i) d.handle[i] = static_cast<uint8_t>(i * 7 + 1);
  d.bytes = (uint64_t{1} << 33) + 4096;
  d.device = 3;
  d.ownerPid = 4242;
  return d;
}

IpcEventDescriptor sampleEvent() {
  IpcEventDescriptor d;
  for (size_t i = 0; i < d.handle.size(); ++i) d.handle[i] = static_cast<uint8_t>(255 - i);
  d.ownerPid = 77;
  return d;
}

// The hoop::Error a decode throws, with its code and message.
template <typename Decode>
Error decodeError(Decode decode) {
  try {
    decode();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "decoding succeeded";
  return Error(hoopSuccess, "");
}

void expectRefused(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  const Error e = decodeError([&] { decodeIpcMemory(bytes.data(), bytes.size(), 5); });
  EXPECT_EQ(e.code(), hoopRemoteError);
  EXPECT_NE(std::string(e.what()).find("rank 5"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
}

TEST(CudaIpcHandleTest, MemoryDescriptorRoundTrips) {
  const IpcMemoryDescriptor in = sampleMemory();
  const std::vector<uint8_t> bytes = encodeIpcMemory(in);
  EXPECT_EQ(bytes.size(), 88u);
  const IpcMemoryDescriptor out = decodeIpcMemory(bytes.data(), bytes.size(), 1);
  EXPECT_EQ(out.handle, in.handle);
  EXPECT_EQ(out.bytes, in.bytes);
  EXPECT_EQ(out.device, in.device);
  EXPECT_EQ(out.ownerPid, in.ownerPid);
}

TEST(CudaIpcHandleTest, EventDescriptorRoundTrips) {
  const IpcEventDescriptor in = sampleEvent();
  const std::vector<uint8_t> bytes = encodeIpcEvent(in);
  EXPECT_EQ(bytes.size(), 76u);
  const IpcEventDescriptor out = decodeIpcEvent(bytes.data(), bytes.size(), 1);
  EXPECT_EQ(out.handle, in.handle);
  EXPECT_EQ(out.ownerPid, in.ownerPid);
}

TEST(CudaIpcHandleTest, EncodingIsLittleEndianWithAHeader) {
  const std::vector<uint8_t> bytes = encodeIpcMemory(sampleMemory());
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "hCIP");
  EXPECT_EQ(bytes[4], 1);  // version, low byte first
  EXPECT_EQ(bytes[5], 0);
  EXPECT_EQ(bytes[6], 1);  // kind: memory
  EXPECT_EQ(bytes[7], 0);  // reserved
  EXPECT_EQ(bytes[8], 1);  // first handle byte
  // bytes = 2^33 + 4096: little-endian u64 after the 64 handle bytes.
  const size_t at = 8 + kIpcHandleBytes;
  EXPECT_EQ(bytes[at + 1], 0x10);
  EXPECT_EQ(bytes[at + 4], 0x02);
}

TEST(CudaIpcHandleTest, EveryTruncationAndExtensionIsRefused) {
  const std::vector<uint8_t> good = encodeIpcMemory(sampleMemory());
  for (size_t size = 0; size < good.size(); ++size) {
    expectRefused(std::vector<uint8_t>(good.begin(), good.begin() + size), "bytes, expected 88");
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expectRefused(longer, "bytes, expected 88");
}

TEST(CudaIpcHandleTest, BadHeaderFieldsAreRefused) {
  const std::vector<uint8_t> good = encodeIpcMemory(sampleMemory());
  for (size_t at : {0u, 3u, 4u, 5u, 6u, 7u}) {
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0x40;
    expectRefused(bad, "malformed");
  }
}

TEST(CudaIpcHandleTest, AnEventIsNotAMemoryHandle) {
  const std::vector<uint8_t> event = encodeIpcEvent(sampleEvent());
  const Error e = decodeError([&] { decodeIpcMemory(event.data(), event.size(), 2); });
  EXPECT_EQ(e.code(), hoopRemoteError);
  std::vector<uint8_t> memory = encodeIpcMemory(sampleMemory());
  const Error e2 = decodeError([&] { decodeIpcEvent(memory.data(), memory.size(), 2); });
  EXPECT_EQ(e2.code(), hoopRemoteError);
  // Same size as an event but the memory kind byte: refused on the kind.
  std::vector<uint8_t> relabelled = event;
  relabelled[6] = 1;
  const Error e3 = decodeError([&] { decodeIpcEvent(relabelled.data(), relabelled.size(), 2); });
  EXPECT_NE(std::string(e3.what()).find("malformed"), std::string::npos) << e3.what();
}

TEST(CudaIpcHandleTest, FieldRangesAreChecked) {
  IpcMemoryDescriptor d = sampleMemory();
  d.bytes = 0;
  expectRefused(encodeIpcMemory(d), "for 0 bytes");
  d = sampleMemory();
  d.bytes = kMaxIpcBufferBytes + 1;
  expectRefused(encodeIpcMemory(d), "bytes (allowed");
  d = sampleMemory();
  d.device = -1;
  expectRefused(encodeIpcMemory(d), "device -1");
  d = sampleMemory();
  d.device = 4096;
  expectRefused(encodeIpcMemory(d), "device 4096");
  d = sampleMemory();
  d.ownerPid = 0;
  expectRefused(encodeIpcMemory(d), "owner pid 0");
  d = sampleMemory();
  d.handle.fill(0);
  expectRefused(encodeIpcMemory(d), "empty");
}

TEST(CudaIpcHandleTest, LargestBufferIsAccepted) {
  IpcMemoryDescriptor d = sampleMemory();
  d.bytes = kMaxIpcBufferBytes;
  const std::vector<uint8_t> bytes = encodeIpcMemory(d);
  EXPECT_EQ(decodeIpcMemory(bytes.data(), bytes.size(), 0).bytes, kMaxIpcBufferBytes);
}

}  // namespace
}  // namespace hoop::cuda_ipc
