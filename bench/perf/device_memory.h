// hoop-perf's device side (--memory device): buffers in device memory, the stream every call is
// enqueued on, and the copies that fill and read the buffers for the check. All of it goes through
// the device runtime hoop's C API itself uses (deviceRuntime()): that is why hoop-perf links the
// internal library, since a second copy of the runtime would not share the C API's emulated
// allocations. A runtime error ends the run like a failed hoop call (hoop_call.h).
#pragma once

#include <hoop/hoop.h>

#include <cstddef>
#include <string>

namespace hoop::perf {

// Device memory of `bytes`, freed with the object. Throws std::exception where the device has no
// room, so that every rank can agree on stopping.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The run's one stream, destroyed with the object (after the run synchronized it).
class BenchStream {
 public:
  BenchStream();
  ~BenchStream();
  BenchStream(const BenchStream&) = delete;
  BenchStream& operator=(const BenchStream&) = delete;
  hoopStream_t get() const { return stream_; }

 private:
  hoopStream_t stream_ = nullptr;
};

// Blocking copies between host and device memory; nothing for 0 bytes.
void uploadToDevice(void* device, const void* host, size_t bytes);
void downloadFromDevice(void* host, const void* device, size_t bytes);

// Waits until everything enqueued on `stream` has run.
void synchronizeStream(hoopStream_t stream);

// The device the buffers live on, for the header and the JSON ("GPU 0 (NVIDIA H200, ...)"), and
// whether it is the CPU emulation (HOOP_DEVICE_EMULATION=1), whose times mean nothing.
std::string deviceDescription();
bool deviceIsEmulated();

}  // namespace hoop::perf
