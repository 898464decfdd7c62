#include "device_memory.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

#include "device/device_runtime.h"
#include "hoop_call.h"

namespace hoop::perf {
namespace {

// Runs one runtime operation; its error is reported as a failed hoop call would be, then exits.
template <typename Operation>
auto orExit(const char* what, Operation&& operation) {
  try {
    return std::forward<Operation>(operation)();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "hoop-perf: %s failed: %s\n", what, error.what());
    std::fflush(stdout);
    std::exit(kExitHoopError);
  }
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes)
    // One byte at least: a null pointer would read as host memory to the C API.
    : data_(deviceRuntime().allocate(bytes == 0 ? 1 : bytes)) {}

DeviceBuffer::~DeviceBuffer() { deviceRuntime().release(data_); }

BenchStream::BenchStream()
    : stream_(orExit("creating a device stream", [] { return deviceRuntime().createStream(); })) {}

BenchStream::~BenchStream() { deviceRuntime().destroyStream(stream_); }

void uploadToDevice(void* device, const void* host, size_t bytes) {
  if (bytes == 0) return;
  orExit("uploading to device memory", [&] { deviceRuntime().upload(device, host, bytes); });
}

void downloadFromDevice(void* host, const void* device, size_t bytes) {
  if (bytes == 0) return;
  orExit("downloading from device memory", [&] { deviceRuntime().download(host, device, bytes); });
}

void synchronizeStream(hoopStream_t stream) {
  orExit("synchronizing the stream", [&] { deviceRuntime().synchronize(stream); });
}

std::string deviceDescription() {
  return orExit("describing the device", [] {
    DeviceRuntime& runtime = deviceRuntime();
    return runtime.describeDevice(runtime.currentDevice());
  });
}

bool deviceIsEmulated() { return deviceEmulated(); }

}  // namespace hoop::perf
