// Sharing emulated device memory between processes: a fork()ed child imports the parent's export
// and writes through it; handles that are not exports, or this process's own, are refused.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "base/error.h"
#include "device/emulated/ipc_handle.h"
#include "emulated_test_util.h"

namespace hoop::testing {
namespace {

constexpr size_t kBytes = 3 * 4096 + 100;

// The child's checks, as exit codes (gtest must not run in the forked child).
enum ChildResult {
  kChildOk = 0,
  kImportFailed = 10,
  kNotDevice = 11,
  kWrongContents = 12,
  kOversizeAccepted = 13,
};

int childImportsAndWrites(const DeviceIpcHandle& handle) {
  DeviceRuntime& runtime = deviceRuntime();
  try {
    runtime.importMemory(handle, kBytes + 1);
    return kOversizeAccepted;
  } catch (const Error&) {
  }
  unsigned char* data = nullptr;
  try {
    data = static_cast<unsigned char*>(runtime.importMemory(handle, kBytes));
  } catch (const Error&) {
    return kImportFailed;
  }
  if (runtime.kindOf(data) != MemoryKind::kDevice ||
      runtime.kindOf(data + kBytes - 1) != MemoryKind::kDevice) {
    return kNotDevice;
  }
  for (size_t i = 0; i < kBytes; ++i) {
    if (data[i] != static_cast<unsigned char>(i * 3)) return kWrongContents;
  }
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<unsigned char>(255 - i % 251);
  runtime.closeImported(data);
  return kChildOk;
}

TEST(DeviceEmulatedIpcTest, AChildProcessWritesThroughItsImport) {
  DeviceRuntime& runtime = emulation();
  auto* data = static_cast<unsigned char*>(runtime.allocate(kBytes));
  ASSERT_NE(data, nullptr);
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<unsigned char>(i * 3);
  const DeviceIpcHandle handle = runtime.exportMemory(data);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(childImportsAndWrites(handle));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died, status " << status;
  ASSERT_EQ(WEXITSTATUS(status), kChildOk);

  size_t mismatches = 0;
  for (size_t i = 0; i < kBytes; ++i) {
    if (data[i] != static_cast<unsigned char>(255 - i % 251)) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0u);
  runtime.release(data);
}

TEST(DeviceEmulatedIpcTest, ReleaseRemovesTheSegmentsName) {
  DeviceRuntime& runtime = emulation();
  void* data = runtime.allocate(64);
  const std::string name = emulated::decodeHandle(runtime.exportMemory(data)).name;
  const std::string path = "/dev/shm" + name;
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  runtime.release(data);
  EXPECT_NE(stat(path.c_str(), &info), 0) << path << " is still there";
}

TEST(DeviceEmulatedIpcTest, GarbageHandlesAreRefusedWithAMessage) {
  DeviceRuntime& runtime = emulation();
  DeviceIpcHandle zeros{};
  try {
    runtime.importMemory(zeros, 64);
    FAIL() << "a zero handle was imported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("not an emulated device IPC handle"),
              std::string::npos)
        << error.what();
  }

  // A real handle with its name bent towards another file: refused before shm_open sees it.
  void* data = runtime.allocate(64);
  DeviceIpcHandle bent = runtime.exportMemory(data);
  std::memcpy(bent.data() + 20, "/../../etc/passwd", 17);
  try {
    runtime.importMemory(bent, 64);
    FAIL() << "a bent handle was imported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("bad segment name"), std::string::npos)
        << error.what();
  }
  runtime.release(data);
}

TEST(DeviceEmulatedIpcTest, ThisProcesssOwnExportIsRefused) {
  DeviceRuntime& runtime = emulation();
  void* data = runtime.allocate(64);
  try {
    runtime.importMemory(runtime.exportMemory(data), 64);
    FAIL() << "this process's own export was imported";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), hoopInvalidUsage);
    EXPECT_NE(std::string(error.what()).find("exported by this very process"), std::string::npos)
        << error.what();
  }
  runtime.release(data);
}

TEST(DeviceEmulatedIpcTest, OnlyTheStartOfAnAllocationIsExported) {
  DeviceRuntime& runtime = emulation();
  auto* data = static_cast<char*>(runtime.allocate(64));
  int onTheStack = 0;
  EXPECT_THROW(runtime.exportMemory(data + 8), Error);
  EXPECT_THROW(runtime.exportMemory(&onTheStack), Error);
  runtime.release(data);
}

}  // namespace
}  // namespace hoop::testing
