// The one loop every element-wise kernel runs, and the per-codec launcher. One kernel per
// (element type, op) and nothing more: the optional second output and the avg divisor are
// launch arguments, not template parameters, which keeps the CUDA build small.
//
// Layout of the work, chosen by the launcher (launch.cu):
//   [0, head)                          element by element: up to the first 16-byte boundary (or
//                                      everything, when the pointers disagree modulo 16)
//   [head, head + vectors * perVector) 16-byte vectors (uint4), aligned for every pointer
//   [.., count)                        element by element: fewer than perVector left over
// Each part is a grid-stride loop, so any grid size covers any count; the launcher caps the grid
// at what the device holds resident at once.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "device/cuda/element_ops.cuh"
#include "device/cuda/elementwise_launch.cuh"

namespace hoop::cuda_kernels {

template <typename Codec, typename Op>
__device__ __forceinline__ typename Codec::Storage applyOp(const Op& op, typename Codec::Storage x,
                                                           typename Codec::Storage y) {
  return Codec::store(op(Codec::load(x), Codec::load(y)));
}

// Reads happen before writes for every element (and for every vector), so any of out1, out2, a,
// b may be the same buffer: no __restrict__ here, on purpose.
template <typename Codec, template <typename> class OpT>
__global__ void __launch_bounds__(kThreadsPerBlock) elementwiseKernel(ElementwiseArgs args) {
  using S = typename Codec::Storage;
  constexpr size_t kPerVector = kVectorBytes / sizeof(S);
  union Vector {
    uint4 raw;
    S lane[kPerVector];
  };
  static_assert(sizeof(Vector) == kVectorBytes);

  const OpT<typename Codec::Compute> op(args.divisor);
  S* out1 = static_cast<S*>(args.out1);
  S* out2 = static_cast<S*>(args.out2);
  const S* a = static_cast<const S*>(args.a);
  const S* b = static_cast<const S*>(args.b);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;

  for (size_t i = first; i < args.head; i += stride) {
    const S r = applyOp<Codec>(op, a[i], b[i]);
    out1[i] = r;
    if (out2 != nullptr) out2[i] = r;
  }

  if (args.vectors > 0) {
    const auto* va = reinterpret_cast<const uint4*>(a + args.head);
    const auto* vb = reinterpret_cast<const uint4*>(b + args.head);
    auto* vo1 = reinterpret_cast<uint4*>(out1 + args.head);
    auto* vo2 = out2 != nullptr ? reinterpret_cast<uint4*>(out2 + args.head) : nullptr;
    for (size_t v = first; v < args.vectors; v += stride) {
      Vector x;
      Vector y;
      Vector r;
      x.raw = va[v];
      y.raw = vb[v];
#pragma unroll
      for (size_t k = 0; k < kPerVector; ++k) r.lane[k] = applyOp<Codec>(op, x.lane[k], y.lane[k]);
      vo1[v] = r.raw;
      if (vo2 != nullptr) vo2[v] = r.raw;
    }
  }

  for (size_t i = args.head + args.vectors * kPerVector + first; i < args.count; i += stride) {
    const S r = applyOp<Codec>(op, a[i], b[i]);
    out1[i] = r;
    if (out2 != nullptr) out2[i] = r;
  }
}

template <typename Codec>
void launchForCodec(KernelOp op, const ElementwiseArgs& args, size_t workItems,
                    unsigned multiprocessors, cudaStream_t stream) {
  using Kernel = void (*)(ElementwiseArgs);
  Kernel kernel = nullptr;
  switch (op) {
    case KernelOp::kSum: kernel = elementwiseKernel<Codec, SumOp>; break;
    case KernelOp::kProd: kernel = elementwiseKernel<Codec, ProdOp>; break;
    case KernelOp::kMax: kernel = elementwiseKernel<Codec, MaxOp>; break;
    case KernelOp::kMin: kernel = elementwiseKernel<Codec, MinOp>; break;
    case KernelOp::kSumThenDivide: kernel = elementwiseKernel<Codec, SumThenDivideOp>; break;
    case KernelOp::kDivide: kernel = elementwiseKernel<Codec, DivideOp>; break;
  }
  // The grid is capped at what the SMs hold resident at once, per kernel: registers differ (the
  // avg kernels need more), and a grid larger than one resident wave would leave a partial
  // second wave. Asked once per kernel; it depends on the architecture, not on the arguments.
  static std::atomic<int> residentPerSm[kKernelOps]{};
  std::atomic<int>& cached = residentPerSm[static_cast<size_t>(op)];
  int perSm = cached.load(std::memory_order_relaxed);
  if (perSm == 0) {
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kThreadsPerBlock, 0) !=
            cudaSuccess ||
        perSm < 1) {
      perSm = 1;  // the launch below reports the error, if it persists
    } else {
      cached.store(perSm, std::memory_order_relaxed);
    }
  }
  const size_t wanted = (workItems + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const size_t most = static_cast<size_t>(perSm) * multiprocessors;
  const auto blocks = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < most ? wanted : most));
  kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(args);
}

}  // namespace hoop::cuda_kernels
