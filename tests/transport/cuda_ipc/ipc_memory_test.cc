// CUDA IPC on a real GPU (src/transport/cuda_ipc/ipc_memory.h): a device buffer and an event
// exported by one process, imported by another, written back and checked by the first.
#include "transport/cuda_ipc/ipc_memory.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include "transport/cuda_ipc/ipc_handle.h"

namespace hoop {
namespace {

// The parent never touches CUDA (a process that initialised CUDA cannot use it in a forked
// child), so each child checks for the device itself.

constexpr int kSkipExit = 77;
constexpr size_t kIpcBytes = size_t{1} << 20;
constexpr size_t kWrittenBack = 4096;

bool writeAll(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Exports a buffer of 0x5a and an event recorded after the fill; waits for the importer to write
// 0x33 over the first kWrittenBack bytes and checks it.
int exporter(int toImporter, int fromImporter) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    writeAll(toImporter, "S", 1);
    return kSkipExit;
  }
  try {
    cuda_ipc::ExportedDeviceBuffer buffer(kIpcBytes, 0);
    cuda_ipc::ExportedEvent filled(0);
    if (cudaMemset(buffer.data(), 0x5a, kIpcBytes) != cudaSuccess) return 2;
    filled.record(nullptr);
    const std::vector<uint8_t> memory = cuda_ipc::encodeIpcMemory(buffer.descriptor());
    const std::vector<uint8_t> event = cuda_ipc::encodeIpcEvent(filled.descriptor());
    if (!writeAll(toImporter, "M", 1) || !writeAll(toImporter, memory.data(), memory.size()) ||
        !writeAll(toImporter, event.data(), event.size())) {
      return 3;
    }
    char done = 0;
    if (!readAll(fromImporter, &done, 1) || done != 'D') return 4;
    std::vector<uint8_t> back(kIpcBytes);
    if (cudaMemcpy(back.data(), buffer.data(), kIpcBytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      return 5;
    }
    for (size_t i = 0; i < kIpcBytes; ++i) {
      if (back[i] != (i < kWrittenBack ? 0x33 : 0x5a)) {
        std::fprintf(stderr, "exporter: byte %zu is 0x%x\n", i, back[i]);
        return 6;
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exporter: %s\n", e.what());
    return 7;
  }
}

int importer(int fromExporter, int toExporter) {
  char kind = 0;
  if (!readAll(fromExporter, &kind, 1)) return 10;
  if (kind == 'S') return kSkipExit;
  try {
    std::vector<uint8_t> memory(88);
    std::vector<uint8_t> event(76);
    if (!readAll(fromExporter, memory.data(), memory.size()) ||
        !readAll(fromExporter, event.data(), event.size())) {
      return 11;
    }
    {
      cuda_ipc::ImportedDeviceBuffer buffer(
          cuda_ipc::decodeIpcMemory(memory.data(), memory.size(), 0), 0);
      cuda_ipc::ImportedEvent filled(cuda_ipc::decodeIpcEvent(event.data(), event.size(), 0), 0);
      if (buffer.bytes() != kIpcBytes) return 12;
      filled.waitOn(nullptr);
      std::vector<uint8_t> seen(kIpcBytes);
      if (cudaMemcpy(seen.data(), buffer.data(), kIpcBytes, cudaMemcpyDeviceToHost) !=
          cudaSuccess) {
        return 13;
      }
      for (size_t i = 0; i < kIpcBytes; ++i) {
        if (seen[i] != 0x5a) {
          std::fprintf(stderr, "importer: byte %zu is 0x%x\n", i, seen[i]);
          return 14;
        }
      }
      if (cudaMemset(buffer.data(), 0x33, kWrittenBack) != cudaSuccess) return 15;
      if (cudaDeviceSynchronize() != cudaSuccess) return 16;
    }  // closed before the exporter frees it
    return writeAll(toExporter, "D", 1) ? 0 : 17;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "importer: %s\n", e.what());
    return 18;
  }
}

TEST(GpuIpcTest, TwoProcessesShareABufferAndAnEvent) {
  int down[2];
  int up[2];
  ASSERT_EQ(pipe(down), 0);
  ASSERT_EQ(pipe(up), 0);
  const pid_t exporterPid = fork();
  ASSERT_GE(exporterPid, 0);
  if (exporterPid == 0) _exit(exporter(down[1], up[0]));
  const pid_t importerPid = fork();
  ASSERT_GE(importerPid, 0);
  if (importerPid == 0) _exit(importer(down[0], up[1]));
  for (int fd : {down[0], down[1], up[0], up[1]}) close(fd);
  int exporterStatus = 0;
  int importerStatus = 0;
  ASSERT_EQ(waitpid(exporterPid, &exporterStatus, 0), exporterPid);
  ASSERT_EQ(waitpid(importerPid, &importerStatus, 0), importerPid);
  ASSERT_TRUE(WIFEXITED(exporterStatus) && WIFEXITED(importerStatus));
  if (WEXITSTATUS(exporterStatus) == kSkipExit) {
    GTEST_SKIP() << "no CUDA device visible (checked in the exporting child)";
  }
  EXPECT_EQ(WEXITSTATUS(exporterStatus), 0) << "exporter failed (see its stderr)";
  EXPECT_EQ(WEXITSTATUS(importerStatus), 0) << "importer failed (see its stderr)";
}

}  // namespace
}  // namespace hoop
