// The kernels.h entry points for a CUDA build: argument checks, the split into scalar head,
// 16-byte body and scalar tail, the grid size, and the dispatch to one kernel per (type, op).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "base/error.h"
#include "device/cuda/elementwise_launch.cuh"
#include "device/cuda/kernels.h"

namespace hoop::cuda {
namespace {

using cuda_kernels::Bf16Codec;
using cuda_kernels::ElementwiseArgs;
using cuda_kernels::HalfCodec;
using cuda_kernels::KernelOp;
using cuda_kernels::kThreadsPerBlock;
using cuda_kernels::kVectorBytes;
using cuda_kernels::launchForCodec;
using cuda_kernels::NativeCodec;

[[noreturn]] void failCuda(cudaError_t status, const char* what) {
  fail(hoopUnhandledCudaError, what, ": ", cudaGetErrorName(status), " (",
       cudaGetErrorString(status), ")");
}

// A launch error (bad configuration, no device, an earlier sticky error) shows here; errors of
// the kernel itself show later, on the stream.
void checkLaunch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) failCuda(status, what);
}

// The current device's SM count, cached per device ordinal (it cannot change).
unsigned multiprocessors() {
  constexpr int kMaxDevices = 64;
  static std::array<std::atomic<unsigned>, kMaxDevices> cached{};
  int device = 0;
  cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) failCuda(status, "cudaGetDevice");
  const bool cacheable = device >= 0 && device < kMaxDevices;
  if (cacheable) {
    const unsigned known = cached[static_cast<size_t>(device)].load(std::memory_order_relaxed);
    if (known != 0) return known;
  }
  int sms = 0;
  status = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (status != cudaSuccess) failCuda(status, "cudaDeviceGetAttribute(MultiProcessorCount)");
  const auto count = static_cast<unsigned>(std::max(sms, 1));
  if (cacheable) cached[static_cast<size_t>(device)].store(count, std::memory_order_relaxed);
  return count;
}

// For the copy kernel (few registers): 8 blocks of 256 threads fill an SM.
unsigned copyGridFor(size_t workItems) {
  constexpr size_t kCopyBlocksPerSm = 8;
  const size_t wanted = (workItems + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(std::clamp<size_t>(wanted, 1, kCopyBlocksPerSm * multiprocessors()));
}

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

void checkAligned(const void* p, size_t elementSize, const char* name, DataType type) {
  if (p != nullptr && address(p) % elementSize != 0) {
    fail(hoopInvalidArgument, "CUDA kernel: ", name, " ", p, " is not aligned to the ", elementSize,
         "-byte ", dataTypeName(type), " elements");
  }
}

// Fills head and vectors: the body runs on 16-byte vectors only when every pointer sits at the
// same offset modulo 16 (then one scalar head aligns them all), else everything is the head.
void splitForVectors(ElementwiseArgs& args, size_t elementSize) {
  const uintptr_t offset = address(args.a) % kVectorBytes;
  bool together =
      address(args.b) % kVectorBytes == offset && address(args.out1) % kVectorBytes == offset;
  if (args.out2 != nullptr) together = together && address(args.out2) % kVectorBytes == offset;
  if (!together) {
    args.head = args.count;
    args.vectors = 0;
    return;
  }
  // offset is a multiple of elementSize (checked alignment), so this is a whole element count.
  const size_t headElements = ((kVectorBytes - offset) % kVectorBytes) / elementSize;
  args.head = std::min(headElements, args.count);
  args.vectors = (args.count - args.head) / (kVectorBytes / elementSize);
}

void launch(DataType type, KernelOp op, ElementwiseArgs& args, cudaStream_t stream) {
  const size_t elementSize = dataTypeSize(type);
  if (elementSize == 0) {  // before any "% elementSize" below
    fail(hoopInvalidArgument, "CUDA kernel: invalid data type ", static_cast<int>(type));
  }
  checkAligned(args.out1, elementSize, "output", type);
  checkAligned(args.out2, elementSize, "second output", type);
  checkAligned(args.a, elementSize, "first input", type);
  checkAligned(args.b, elementSize, "second input", type);
  splitForVectors(args, elementSize);
  const size_t tail = args.count - args.head - args.vectors * (kVectorBytes / elementSize);
  const size_t work = std::max({args.head, args.vectors, tail});
  const unsigned sms = multiprocessors();
  switch (type) {
    case DataType::kInt8: launchForCodec<NativeCodec<int8_t>>(op, args, work, sms, stream); break;
    case DataType::kUint8: launchForCodec<NativeCodec<uint8_t>>(op, args, work, sms, stream); break;
    case DataType::kInt32: launchForCodec<NativeCodec<int32_t>>(op, args, work, sms, stream); break;
    case DataType::kUint32:
      launchForCodec<NativeCodec<uint32_t>>(op, args, work, sms, stream);
      break;
    case DataType::kInt64: launchForCodec<NativeCodec<int64_t>>(op, args, work, sms, stream); break;
    case DataType::kUint64:
      launchForCodec<NativeCodec<uint64_t>>(op, args, work, sms, stream);
      break;
    case DataType::kFloat16: launchForCodec<HalfCodec>(op, args, work, sms, stream); break;
    case DataType::kFloat32: launchForCodec<NativeCodec<float>>(op, args, work, sms, stream); break;
    case DataType::kFloat64:
      launchForCodec<NativeCodec<double>>(op, args, work, sms, stream);
      break;
    case DataType::kBfloat16: launchForCodec<Bf16Codec>(op, args, work, sms, stream); break;
  }
  if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess) {
    fail(hoopUnhandledCudaError, "CUDA element-wise kernel launch (", dataTypeName(type), ", op ",
         static_cast<int>(op), ", ", args.count, " elements): ", cudaGetErrorName(status), " (",
         cudaGetErrorString(status), ")");
  }
}

cuda_kernels::Divisor divisorFor(size_t divisor) {
  // The same conversions as the CPU kernels' DivideBy (static_cast from size_t).
  return {static_cast<float>(divisor), static_cast<double>(divisor),
          static_cast<uint64_t>(divisor)};
}

KernelOp kernelOpFor(RedOp op, bool divide) {
  switch (op) {
    case RedOp::kSum: return KernelOp::kSum;
    case RedOp::kProd: return KernelOp::kProd;
    case RedOp::kMax: return KernelOp::kMax;
    case RedOp::kMin: return KernelOp::kMin;
    case RedOp::kAvg: return divide ? KernelOp::kSumThenDivide : KernelOp::kSum;
  }
  fail(hoopInvalidArgument, "CUDA kernel: invalid reduction op ", static_cast<int>(op));
}

// dst = src in bytes: 16-byte vectors when both agree modulo 16, else byte by byte.
__global__ void __launch_bounds__(kThreadsPerBlock)
    copyKernel(uint8_t* dst, const uint8_t* src, size_t bytes, size_t head, size_t vectors) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (size_t i = first; i < head; i += stride) dst[i] = src[i];
  const auto* vs = reinterpret_cast<const uint4*>(src + head);
  auto* vd = reinterpret_cast<uint4*>(dst + head);
  for (size_t v = first; v < vectors; v += stride) vd[v] = vs[v];
  for (size_t i = head + vectors * kVectorBytes + first; i < bytes; i += stride) dst[i] = src[i];
}

// out = in * factor, element by element; each thread reads its element before writing it, so out
// may be in. The factor comes from device memory (read once per thread, in stream order) or by
// value.
template <typename Codec>
__global__ void __launch_bounds__(kThreadsPerBlock)
    scaleKernel(typename Codec::Storage* out, const typename Codec::Storage* in, size_t count,
                const typename Codec::Storage* factorOnDevice,
                typename Codec::Storage factorValue) {
  const cuda_kernels::ProdOp<typename Codec::Compute> multiply(cuda_kernels::Divisor{});
  const auto factor = Codec::load(factorOnDevice != nullptr ? *factorOnDevice : factorValue);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    out[i] = Codec::store(multiply(Codec::load(in[i]), factor));
  }
}

template <typename Codec>
void launchScale(void* out, const void* in, size_t count, const void* factorOnDevice,
                 const void* factorValue, cudaStream_t stream) {
  using S = typename Codec::Storage;
  S value{};
  if (factorOnDevice == nullptr) std::memcpy(&value, factorValue, sizeof(S));
  scaleKernel<Codec><<<copyGridFor(count), kThreadsPerBlock, 0, stream>>>(
      static_cast<S*>(out), static_cast<const S*>(in), count, static_cast<const S*>(factorOnDevice),
      value);
}

}  // namespace

bool kernelsBuilt() { return true; }

void reduceCopyFinalAsync(void* out1, void* out2, const void* a, const void* b, size_t count,
                          DataType type, RedOp op, size_t divisor, CudaStream stream) {
  if (count == 0) return;
  // As the CPU kernels: dividing by 1 is the identity, and 0 is treated as 1.
  const bool divide = op == RedOp::kAvg && divisor > 1;
  ElementwiseArgs args;
  args.out1 = out1;
  args.out2 = out2;
  args.a = a;
  args.b = b;
  args.count = count;
  args.divisor = divisorFor(divisor);
  launch(type, kernelOpFor(op, divide), args, static_cast<cudaStream_t>(stream));
}

void finishAverageAsync(void* out, const void* in, size_t count, DataType type, RedOp op,
                        size_t divisor, CudaStream stream) {
  if (count == 0) return;
  if (op == RedOp::kAvg && divisor > 1) {
    ElementwiseArgs args;
    args.out1 = out;
    args.a = in;
    args.b = in;  // DivideOp ignores it; the same buffer keeps the vector split unchanged
    args.count = count;
    args.divisor = divisorFor(divisor);
    launch(type, KernelOp::kDivide, args, static_cast<cudaStream_t>(stream));
  } else if (out != in) {
    copyAsync(out, in, count * dataTypeSize(type), stream);
  }
}

void scaleAsync(void* out, const void* in, size_t count, DataType type, const void* factorOnDevice,
                const void* factorValue, CudaStream stream) {
  if (count == 0) return;
  const size_t elementSize = dataTypeSize(type);
  if (elementSize == 0) {
    fail(hoopInvalidArgument, "CUDA scale kernel: invalid data type ", static_cast<int>(type));
  }
  checkAligned(out, elementSize, "output", type);
  checkAligned(in, elementSize, "input", type);
  checkAligned(factorOnDevice, elementSize, "factor", type);
  const auto cudaStream = static_cast<cudaStream_t>(stream);
  switch (type) {
    case DataType::kInt8:
      launchScale<NativeCodec<int8_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kUint8:
      launchScale<NativeCodec<uint8_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kInt32:
      launchScale<NativeCodec<int32_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kUint32:
      launchScale<NativeCodec<uint32_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kInt64:
      launchScale<NativeCodec<int64_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kUint64:
      launchScale<NativeCodec<uint64_t>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kFloat16:
      launchScale<HalfCodec>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kFloat32:
      launchScale<NativeCodec<float>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kFloat64:
      launchScale<NativeCodec<double>>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
    case DataType::kBfloat16:
      launchScale<Bf16Codec>(out, in, count, factorOnDevice, factorValue, cudaStream);
      break;
  }
  checkLaunch("CUDA scale kernel launch");
}

void copyAsync(void* dst, const void* src, size_t bytes, CudaStream stream) {
  if (bytes == 0) return;
  size_t head = bytes;
  size_t vectors = 0;
  const uintptr_t offset = address(src) % kVectorBytes;
  if (address(dst) % kVectorBytes == offset) {
    head = std::min((kVectorBytes - offset) % kVectorBytes, bytes);
    vectors = (bytes - head) / kVectorBytes;
  }
  const size_t tail = bytes - head - vectors * kVectorBytes;
  const unsigned blocks = copyGridFor(std::max({head, vectors, tail}));
  copyKernel<<<blocks, kThreadsPerBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes, head, vectors);
  checkLaunch("CUDA copy kernel launch");
}

}  // namespace hoop::cuda
