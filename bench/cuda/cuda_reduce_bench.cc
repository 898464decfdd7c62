// hoop-cuda-bench: bandwidth of the CUDA element-wise kernels against cudaMemcpyAsync
// device-to-device on the same buffers. Bandwidth counts bytes read plus bytes written (a copy
// moves 2x its size, a sum 3x), so a kernel that streams as well as the copy engine scores 100%.
// Each figure is the median of --iters timed launches (CUDA events around each one), after
// warm-up launches.
//
//   hoop-cuda-bench [--min-mib N] [--max-mib N] [--iters N]     sizes N MiB, x4 per step
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "device/cuda/kernels.h"

namespace {

constexpr int kSkipExit = 77;  // CTest's SKIP_RETURN_CODE for this binary

struct Options {
  size_t minMib = 1;
  size_t maxMib = 1024;
  int iters = 20;
  int warmup = 3;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "hoop-cuda-bench: %s\nusage: hoop-cuda-bench [--min-mib N] [--max-mib N] "
               "[--iters N]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const long value = std::strtol(argv[++i], nullptr, 10);
    if (value <= 0) usage(("bad value for " + arg).c_str());
    if (arg == "--min-mib") {
      o.minMib = static_cast<size_t>(value);
    } else if (arg == "--max-mib") {
      o.maxMib = static_cast<size_t>(value);
    } else if (arg == "--iters") {
      o.iters = static_cast<int>(value);
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  if (o.minMib > o.maxMib) usage("--min-mib is above --max-mib");
  return o;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "hoop-cuda-bench: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
}

// Median milliseconds of one call of `run` on `stream`.
double medianMs(const Options& o, cudaStream_t stream, const std::function<void()>& run) {
  cudaEvent_t start;
  cudaEvent_t stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int i = 0; i < o.warmup; ++i) run();
  std::vector<double> ms;
  for (int i = 0; i < o.iters; ++i) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    run();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  check(cudaGetLastError(), "a timed launch");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double gbPerSecond(size_t bytesMoved, double ms) {
  return static_cast<double>(bytesMoved) / ms / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf(
        "hoop-cuda-bench: no CUDA device visible (cudaGetDeviceCount: %s); nothing measured\n",
        status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return kSkipExit;
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  std::printf("# hoop-cuda-bench: %s, %d SMs, median of %d (after %d warm-up)\n", prop.name,
              prop.multiProcessorCount, o.iters, o.warmup);
  std::printf("# GB/s count bytes read + written; %% is of cudaMemcpyAsync D2D at the same size\n");
  std::printf("# %10s %11s %11s %11s %6s %11s %6s %11s %6s\n", "size(B)", "memcpy", "copy-kern",
              "fp32-sum", "%", "bf16-sum", "%", "fp32-sum2o", "%");
  try {
    for (size_t mib = o.minMib; mib <= o.maxMib; mib *= 4) {
      const size_t bytes = mib << 20;
      void* a = nullptr;
      void* b = nullptr;
      void* out = nullptr;
      void* out2 = nullptr;
      check(cudaMalloc(&a, bytes), "cudaMalloc");
      check(cudaMalloc(&b, bytes), "cudaMalloc");
      check(cudaMalloc(&out, bytes), "cudaMalloc");
      check(cudaMalloc(&out2, bytes), "cudaMalloc");
      // Small finite values in every format (0x3c3c: 1.06 in bf16, 0x3c3c3c3c: 0.0115 in fp32).
      check(cudaMemset(a, 0x3c, bytes), "cudaMemset");
      check(cudaMemset(b, 0x3c, bytes), "cudaMemset");
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

      const double memcpyMs = medianMs(o, stream, [&] {
        check(cudaMemcpyAsync(out, a, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
      });
      const double copyMs =
          medianMs(o, stream, [&] { hoop::cuda::copyAsync(out, a, bytes, stream); });
      const double fp32Ms = medianMs(o, stream, [&] {
        hoop::cuda::reduceCopyFinalAsync(out, nullptr, a, b, bytes / 4, hoop::DataType::kFloat32,
                                         hoop::RedOp::kSum, 1, stream);
      });
      const double bf16Ms = medianMs(o, stream, [&] {
        hoop::cuda::reduceCopyFinalAsync(out, nullptr, a, b, bytes / 2, hoop::DataType::kBfloat16,
                                         hoop::RedOp::kSum, 1, stream);
      });
      const double fp32TwoMs = medianMs(o, stream, [&] {
        hoop::cuda::reduceCopyFinalAsync(out, out2, a, b, bytes / 4, hoop::DataType::kFloat32,
                                         hoop::RedOp::kSum, 1, stream);
      });
      const double memcpyGbs = gbPerSecond(2 * bytes, memcpyMs);
      const double fp32Gbs = gbPerSecond(3 * bytes, fp32Ms);
      const double bf16Gbs = gbPerSecond(3 * bytes, bf16Ms);
      const double fp32TwoGbs = gbPerSecond(4 * bytes, fp32TwoMs);
      std::printf("  %10zu %11.1f %11.1f %11.1f %5.0f%% %11.1f %5.0f%% %11.1f %5.0f%%\n", bytes,
                  memcpyGbs, gbPerSecond(2 * bytes, copyMs), fp32Gbs, 100 * fp32Gbs / memcpyGbs,
                  bf16Gbs, 100 * bf16Gbs / memcpyGbs, fp32TwoGbs, 100 * fp32TwoGbs / memcpyGbs);
      std::fflush(stdout);
      cudaFree(a);
      cudaFree(b);
      cudaFree(out);
      cudaFree(out2);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hoop-cuda-bench: %s\n", e.what());
    return 1;
  }
  cudaStreamDestroy(stream);
  return 0;
}
