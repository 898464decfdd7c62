// The element-wise kernels for the integer types (6 types x 6 ops), in a file of their own so
// they compile in parallel with the floating ones.
#include "device/cuda/elementwise.cuh"

namespace hoop::cuda_kernels {

template void launchForCodec<NativeCodec<int8_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                  unsigned, cudaStream_t);
template void launchForCodec<NativeCodec<uint8_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                   unsigned, cudaStream_t);
template void launchForCodec<NativeCodec<int32_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                   unsigned, cudaStream_t);
template void launchForCodec<NativeCodec<uint32_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                    unsigned, cudaStream_t);
template void launchForCodec<NativeCodec<int64_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                   unsigned, cudaStream_t);
template void launchForCodec<NativeCodec<uint64_t>>(KernelOp, const ElementwiseArgs&, size_t,
                                                    unsigned, cudaStream_t);

}  // namespace hoop::cuda_kernels
