// The CUDA DeviceRuntime (src/device/cuda/cuda_runtime.h) on a real GPU: memory and copies,
// flags written and waited on by streams and by the host, a counter in a replayed graph, the
// kernels against the CPU kernels, and memory shared between two processes. Each GPU test skips
// with the reason where no device is visible.
//
// Its own main: the IPC test runs this program again (fork, then exec) in the exporter's and the
// importer's roles, because a process that has initialised CUDA cannot use it in a forked child.
#include "device/cuda/cuda_runtime.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/types.h"
#include "device/cpu/reduce.h"
#include "gpu_test_util.h"

namespace hoop {
namespace {

using Bytes = std::vector<uint8_t>;

// ---- RAII over what the runtime hands out. ----

class RuntimeBuffer {
 public:
  RuntimeBuffer(DeviceRuntime& runtime, size_t bytes)
      : runtime_(runtime), data_(runtime.allocate(bytes)), bytes_(bytes) {}
  ~RuntimeBuffer() { runtime_.release(data_); }
  RuntimeBuffer(const RuntimeBuffer&) = delete;
  RuntimeBuffer& operator=(const RuntimeBuffer&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  DeviceRuntime& runtime_;
  void* data_;
  size_t bytes_;
};

class RuntimeStream {
 public:
  explicit RuntimeStream(DeviceRuntime& runtime)
      : runtime_(runtime), stream_(runtime.createStream()) {}
  ~RuntimeStream() { runtime_.destroyStream(stream_); }
  RuntimeStream(const RuntimeStream&) = delete;
  RuntimeStream& operator=(const RuntimeStream&) = delete;
  DeviceStream get() const { return stream_; }
  cudaStream_t cuda() const { return static_cast<cudaStream_t>(stream_); }

 private:
  DeviceRuntime& runtime_;
  DeviceStream stream_;
};

// A shared anonymous mapping, as hoop's flags live in shared memory between processes.
class SharedPages {
 public:
  explicit SharedPages(size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail(hoopSystemError, "mmap(", bytes, "): ", errnoText(errno));
    data_ = p;
  }
  ~SharedPages() { munmap(data_, bytes_); }
  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_;
};

// Shared pages mapped for the device: 32-bit words the host and the streams both use.
class MappedWords {
 public:
  explicit MappedWords(DeviceRuntime& runtime)
      : runtime_(runtime),
        pages_(static_cast<size_t>(sysconf(_SC_PAGESIZE))),
        device_(static_cast<uint32_t*>(runtime.mapHost(pages_.data(), pages_.bytes()))) {}
  ~MappedWords() { runtime_.unmapHost(pages_.data()); }
  MappedWords(const MappedWords&) = delete;
  MappedWords& operator=(const MappedWords&) = delete;

  uint32_t* device(size_t i) const { return device_ + i; }
  std::atomic_ref<uint32_t> host(size_t i) const {
    return std::atomic_ref<uint32_t>(static_cast<uint32_t*>(pages_.data())[i]);
  }

 private:
  DeviceRuntime& runtime_;
  SharedPages pages_;
  uint32_t* device_;
};

Bytes pattern(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Bytes out(bytes);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

Bytes readBack(const void* device, size_t bytes) {
  Bytes out(bytes);
  const cudaError_t status = cudaMemcpy(out.data(), device, bytes, cudaMemcpyDeviceToHost);
  if (status != cudaSuccess) ADD_FAILURE() << "cudaMemcpy D2H: " << cudaGetErrorString(status);
  return out;
}

void upload(void* device, const Bytes& bytes) {
  const cudaError_t status = cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
  if (status != cudaSuccess) ADD_FAILURE() << "cudaMemcpy H2D: " << cudaGetErrorString(status);
}

// Whether `stream` finishes within `limit`, asked without blocking: a flag that never comes
// fails the test instead of hanging it.
bool finishesWithin(cudaStream_t stream, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    const cudaError_t status = cudaStreamQuery(stream);
    if (status == cudaSuccess) return true;
    if (status != cudaErrorNotReady) {
      ADD_FAILURE() << "cudaStreamQuery: " << cudaGetErrorString(status);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

constexpr auto kPatience = std::chrono::milliseconds(10'000);

// ---- Tests in this process. ----

TEST(CudaRuntimeTest, ArgumentErrorsComeBeforeAnyCudaCall) {
  // No GPU needed: these are refused before CUDA is asked anything.
  DeviceRuntime& runtime = cudaDeviceRuntime();
  EXPECT_STREQ(runtime.name(), "cuda");
  try {
    runtime.waitFlag(nullptr, 0, nullptr);
    ADD_FAILURE() << "waitFlag with mask 0 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument) << e.what();
  }
  alignas(4096) static uint8_t page[8192];
  try {
    runtime.mapHost(page + 1, 4096);
    ADD_FAILURE() << "mapHost of a misaligned address was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), hoopInvalidArgument) << e.what();
    EXPECT_NE(std::string(e.what()).find("whole pages"), std::string::npos) << e.what();
  }
}

TEST(CudaRuntimeTest, DescribesTheCurrentDevice) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  const int device = runtime.currentDevice();
  EXPECT_GE(device, 0);
  const std::string description = runtime.describeDevice(device);
  EXPECT_EQ(description.rfind("GPU " + std::to_string(device) + " (", 0), 0u) << description;
  EXPECT_EQ(description.find("unknown"), std::string::npos) << description;
  // "GPU 0 (NVIDIA H200, 0000:19:00.0)": a name, then the PCI bus id.
  EXPECT_NE(description.find(":"), std::string::npos) << description;
  EXPECT_EQ(description.back(), ')') << description;
}

TEST(CudaRuntimeTest, AllocatesCopiesAndSynchronizes) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  constexpr size_t kBytes = (size_t{1} << 20) + 37;  // a byte tail after the vectors
  RuntimeBuffer src(runtime, kBytes + 1);
  RuntimeBuffer dst(runtime, kBytes + 1);
  EXPECT_EQ(runtime.kindOf(src.data()), MemoryKind::kDevice);
  int host = 0;
  EXPECT_EQ(runtime.kindOf(&host), MemoryKind::kHost);
  const Bytes data = pattern(kBytes + 1, 7);
  upload(src.data(), data);
  upload(dst.data(), Bytes(kBytes + 1, 0));
  RuntimeStream stream(runtime);
  // Offset by one byte on one side only: the element-by-element path.
  runtime.copy(dst.data(), src.data() + 1, kBytes, stream.get());
  runtime.copy(dst.data(), dst.data(), kBytes, stream.get());  // dst == src: nothing
  runtime.copy(dst.data(), src.data(), 0, stream.get());       // 0 bytes: nothing
  runtime.synchronize(stream.get());
  EXPECT_FALSE(runtime.capturing(stream.get()));
  const Bytes got = readBack(dst.data(), kBytes + 1);
  EXPECT_TRUE(std::equal(got.begin(), got.begin() + kBytes, data.begin() + 1));
  EXPECT_EQ(got[kBytes], 0u) << "the copy wrote past its end";
}

TEST(CudaRuntimeTest, EventsOrderTwoStreams) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  constexpr size_t kBytes = size_t{32} << 20;
  RuntimeBuffer src(runtime, kBytes);
  RuntimeBuffer mid(runtime, kBytes);
  RuntimeBuffer dst(runtime, kBytes);
  const Bytes data = pattern(kBytes, 11);
  upload(src.data(), data);
  RuntimeStream first(runtime);
  RuntimeStream second(runtime);
  DeviceEvent copied = runtime.createEvent();
  runtime.copy(mid.data(), src.data(), kBytes, first.get());
  runtime.recordEvent(copied, first.get());
  runtime.streamWaitEvent(second.get(), copied);
  runtime.copy(dst.data(), mid.data(), kBytes, second.get());
  runtime.synchronize(second.get());
  runtime.destroyEvent(copied);
  EXPECT_TRUE(readBack(dst.data(), kBytes) == data);
}

TEST(CudaRuntimeTest, FlagWrittenByOneStreamOrdersACopyOnAnother) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  constexpr size_t kBytes = size_t{64} << 20;  // long enough that an unordered copy would race
  RuntimeBuffer src(runtime, kBytes);
  RuntimeBuffer mid(runtime, kBytes);
  RuntimeBuffer dst(runtime, kBytes);
  const Bytes data = pattern(kBytes, 3);
  upload(src.data(), data);
  upload(mid.data(), Bytes(kBytes, 0));
  MappedWords flags(runtime);
  RuntimeStream producer(runtime);
  RuntimeStream consumer(runtime);
  // The consumer is enqueued first: only the flag keeps it from copying mid too early.
  runtime.waitFlag(flags.device(0), 0x2, consumer.get());
  runtime.copy(dst.data(), mid.data(), kBytes, consumer.get());
  runtime.copy(mid.data(), src.data(), kBytes, producer.get());
  runtime.writeFlag(flags.device(0), 0x6, producer.get());
  const bool finished = finishesWithin(consumer.cuda(), kPatience);
  if (!finished) flags.host(0).store(0xffffffffu);  // release the stream before teardown
  ASSERT_TRUE(finished) << "the waiting stream never saw the flag";
  runtime.synchronize(producer.get());
  EXPECT_EQ(flags.host(0).load(), 0x6u);
  EXPECT_TRUE(readBack(dst.data(), kBytes) == data) << "the waiting stream copied too early";
}

TEST(CudaRuntimeTest, HostWrittenFlagReleasesAWaitingStream) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  constexpr size_t kBytes = 4096;
  RuntimeBuffer src(runtime, kBytes);
  RuntimeBuffer dst(runtime, kBytes);
  const Bytes data = pattern(kBytes, 5);
  upload(src.data(), data);
  upload(dst.data(), Bytes(kBytes, 0));
  MappedWords flags(runtime);
  RuntimeStream stream(runtime);
  flags.host(1).store(0x10);  // bits outside the mask do not release it
  runtime.waitFlag(flags.device(1), 0x1, stream.get());
  runtime.copy(dst.data(), src.data(), kBytes, stream.get());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const cudaError_t before = cudaStreamQuery(stream.cuda());
  EXPECT_EQ(before, cudaErrorNotReady) << "the stream went on before the flag was set";
  flags.host(1).store(0x11, std::memory_order_release);
  const bool finished = finishesWithin(stream.cuda(), kPatience);
  if (!finished) flags.host(1).store(0xffffffffu);
  ASSERT_TRUE(finished) << "the waiting stream never saw the host's write";
  runtime.synchronize(stream.get());
  EXPECT_TRUE(readBack(dst.data(), kBytes) == data);
}

struct GraphDeleter {
  void operator()(cudaGraph_t graph) const { cudaGraphDestroy(graph); }
};
struct GraphExecDeleter {
  void operator()(cudaGraphExec_t exec) const { cudaGraphExecDestroy(exec); }
};

TEST(CudaRuntimeTest, CounterInAGraphCountsEveryReplay) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  MappedWords words(runtime);
  RuntimeStream stream(runtime);
  HOOP_CUDA_ASSERT(cudaStreamBeginCapture(stream.cuda(), cudaStreamCaptureModeThreadLocal));
  EXPECT_TRUE(runtime.capturing(stream.get()));
  try {
    runtime.addToCounter(words.device(0), stream.get());
    runtime.writeFlag(words.device(1), 9, stream.get());  // flags are capturable too
  } catch (const std::exception& e) {
    cudaGraph_t abandoned = nullptr;
    cudaStreamEndCapture(stream.cuda(), &abandoned);
    if (abandoned != nullptr) cudaGraphDestroy(abandoned);
    FAIL() << "during capture: " << e.what();
  }
  cudaGraph_t captured = nullptr;
  HOOP_CUDA_ASSERT(cudaStreamEndCapture(stream.cuda(), &captured));
  const std::unique_ptr<CUgraph_st, GraphDeleter> graph(captured);
  EXPECT_FALSE(runtime.capturing(stream.get()));
  cudaGraphExec_t instantiated = nullptr;
  HOOP_CUDA_ASSERT(cudaGraphInstantiate(&instantiated, graph.get(), 0));
  const std::unique_ptr<CUgraphExec_st, GraphExecDeleter> exec(instantiated);
  for (int replay = 0; replay < 3; ++replay) {
    HOOP_CUDA_ASSERT(cudaGraphLaunch(exec.get(), stream.cuda()));
  }
  runtime.synchronize(stream.get());
  EXPECT_EQ(words.host(0).load(), 3u);
  EXPECT_EQ(words.host(1).load(), 9u);
}

TEST(CudaRuntimeTest, KernelsGiveTheCpuKernelsBits) {
  HOOP_SKIP_WITHOUT_GPU();
  DeviceRuntime& runtime = cudaDeviceRuntime();
  struct Case {
    DataType type;
    RedOp op;
    size_t divisor;
  };
  constexpr Case kCases[] = {
      {DataType::kFloat32, RedOp::kAvg, 3},  {DataType::kBfloat16, RedOp::kSum, 1},
      {DataType::kFloat16, RedOp::kMin, 1},  {DataType::kFloat64, RedOp::kProd, 1},
      {DataType::kInt32, RedOp::kMax, 1},    {DataType::kUint8, RedOp::kSum, 1},
      {DataType::kBfloat16, RedOp::kAvg, 8},
  };
  constexpr size_t kCount = 4099;  // vectors and a scalar tail
  RuntimeStream stream(runtime);
  uint64_t seed = 100;
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(dataTypeName(c.type)) + " " + std::string(redOpName(c.op)));
    const size_t bytes = kCount * dataTypeSize(c.type);
    const Bytes a = pattern(bytes, ++seed);
    const Bytes b = pattern(bytes, ++seed);
    Bytes out1(bytes);
    Bytes out2(bytes);
    reduceCopyFinalAt(CpuIsa::kPortable, out1.data(), out2.data(), a.data(), b.data(), kCount,
                      c.type, c.op, c.divisor);
    Bytes averaged(bytes);
    finishAverageAt(CpuIsa::kPortable, averaged.data(), a.data(), kCount, c.type, c.op, c.divisor);

    RuntimeBuffer da(runtime, bytes);
    RuntimeBuffer db(runtime, bytes);
    RuntimeBuffer d1(runtime, bytes);
    RuntimeBuffer d2(runtime, bytes);
    RuntimeBuffer dAveraged(runtime, bytes);
    upload(da.data(), a);
    upload(db.data(), b);
    runtime.reduceCopyFinal(d1.data(), d2.data(), da.data(), db.data(), kCount, c.type, c.op,
                            c.divisor, stream.get());
    runtime.finishAverage(dAveraged.data(), da.data(), kCount, c.type, c.op, c.divisor,
                          stream.get());
    runtime.synchronize(stream.get());
    EXPECT_TRUE(readBack(d1.data(), bytes) == out1);
    EXPECT_TRUE(readBack(d2.data(), bytes) == out2);
    EXPECT_TRUE(readBack(dAveraged.data(), bytes) == averaged);
  }
}

// ---- IPC: two processes, each this program run again in one role. ----

constexpr int kSkipExit = 77;
constexpr size_t kIpcBytes = size_t{1} << 20;
constexpr size_t kWrittenBack = 4096;
constexpr const char* kExporterRole = "--cuda-runtime-ipc-exporter";
constexpr const char* kImporterRole = "--cuda-runtime-ipc-importer";

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

bool deviceVisible() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

// Allocates and exports a buffer of 0x5a; once the importer says it is done, expects 0x33 in the
// first kWrittenBack bytes and 0x5a after.
int exporter(int toImporter, int fromImporter) {
  if (!deviceVisible()) {
    writeAll(toImporter, "S", 1);
    return kSkipExit;
  }
  try {
    DeviceRuntime& runtime = cudaDeviceRuntime();
    RuntimeBuffer buffer(runtime, kIpcBytes);
    if (cudaMemset(buffer.data(), 0x5a, kIpcBytes) != cudaSuccess) return 2;
    if (cudaDeviceSynchronize() != cudaSuccess) return 3;
    const DeviceIpcHandle handle = runtime.exportMemory(buffer.data());
    if (!writeAll(toImporter, "M", 1) || !writeAll(toImporter, handle.data(), handle.size())) {
      return 4;
    }
    char done = 0;
    if (!readAll(fromImporter, &done, 1) || done != 'D') return 5;
    const Bytes back = readBack(buffer.data(), kIpcBytes);
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

// Imports the buffer, checks it, writes 0x33 over its start with the runtime's copy kernel,
// closes it and tells the exporter.
int importer(int fromExporter, int toExporter) {
  char kind = 0;
  if (!readAll(fromExporter, &kind, 1)) return 10;
  if (kind == 'S') return kSkipExit;
  try {
    DeviceIpcHandle handle{};
    if (!readAll(fromExporter, handle.data(), handle.size())) return 11;
    DeviceRuntime& runtime = cudaDeviceRuntime();
    {
      RuntimeBuffer source(runtime, kWrittenBack);
      if (cudaMemset(source.data(), 0x33, kWrittenBack) != cudaSuccess) return 12;
      if (cudaDeviceSynchronize() != cudaSuccess) return 13;
      void* imported = runtime.importMemory(handle, kIpcBytes);
      const Bytes seen = readBack(imported, kIpcBytes);
      for (size_t i = 0; i < kIpcBytes; ++i) {
        if (seen[i] != 0x5a) {
          std::fprintf(stderr, "importer: byte %zu is 0x%x\n", i, seen[i]);
          runtime.closeImported(imported);
          return 14;
        }
      }
      RuntimeStream stream(runtime);
      runtime.copy(imported, source.data(), kWrittenBack, stream.get());
      runtime.synchronize(stream.get());
      runtime.closeImported(imported);  // before the exporter frees it
    }
    return writeAll(toExporter, "D", 1) ? 0 : 15;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "importer: %s\n", e.what());
    return 16;
  }
}

// Runs this program again as `role` with the two pipe ends; closes every other end in the child.
pid_t spawnRole(const char* role, int readFd, int writeFd, const std::vector<int>& others) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  for (int fd : others) close(fd);
  const std::string in = std::to_string(readFd);
  const std::string out = std::to_string(writeFd);
  execl("/proc/self/exe", "hoop_cuda_runtime_test", role, in.c_str(), out.c_str(),
        static_cast<char*>(nullptr));
  std::fprintf(stderr, "exec /proc/self/exe: %s\n", std::strerror(errno));
  _exit(127);
}

TEST(CudaRuntimeIpcTest, TwoProcessesShareAnAllocation) {
  HOOP_SKIP_WITHOUT_GPU();
  int down[2];  // exporter -> importer
  int up[2];    // importer -> exporter
  ASSERT_EQ(pipe(down), 0);
  ASSERT_EQ(pipe(up), 0);
  const pid_t exporterPid = spawnRole(kExporterRole, up[0], down[1], {down[0], up[1]});
  ASSERT_GE(exporterPid, 0);
  const pid_t importerPid = spawnRole(kImporterRole, down[0], up[1], {down[1], up[0]});
  ASSERT_GE(importerPid, 0);
  for (int fd : {down[0], down[1], up[0], up[1]}) close(fd);
  int exporterStatus = 0;
  int importerStatus = 0;
  ASSERT_EQ(waitpid(exporterPid, &exporterStatus, 0), exporterPid);
  ASSERT_EQ(waitpid(importerPid, &importerStatus, 0), importerPid);
  ASSERT_TRUE(WIFEXITED(exporterStatus) && WIFEXITED(importerStatus));
  if (WEXITSTATUS(exporterStatus) == kSkipExit) {
    GTEST_SKIP() << "no CUDA device visible (checked in the exporting process)";
  }
  EXPECT_EQ(WEXITSTATUS(exporterStatus), 0) << "exporter failed (see its stderr)";
  EXPECT_EQ(WEXITSTATUS(importerStatus), 0) << "importer failed (see its stderr)";
}

// A role's arguments: the fd it reads and the fd it writes.
int runRole(const char* role, const char* readFd, const char* writeFd) {
  const int in = std::atoi(readFd);
  const int out = std::atoi(writeFd);
  if (std::strcmp(role, kExporterRole) == 0) return exporter(out, in);
  return importer(in, out);
}

}  // namespace
}  // namespace hoop

int main(int argc, char** argv) {
  if (argc == 4 && (std::strcmp(argv[1], hoop::kExporterRole) == 0 ||
                    std::strcmp(argv[1], hoop::kImporterRole) == 0)) {
    return hoop::runRole(argv[1], argv[2], argv[3]);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
