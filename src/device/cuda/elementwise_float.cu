// The element-wise kernels for the floating types (fp32, fp64, fp16, bf16 x 6 ops), in a file
// of their own so they compile in parallel with the integer ones.
#include "device/cuda/elementwise.cuh"

namespace hoop::cuda_kernels {

template void launchForCodec<NativeCodec<float>>(KernelOp, const ElementwiseArgs&, size_t, unsigned,
                                                 cudaStream_t);
template void launchForCodec<NativeCodec<double>>(KernelOp, const ElementwiseArgs&, size_t,
                                                  unsigned, cudaStream_t);
template void launchForCodec<HalfCodec>(KernelOp, const ElementwiseArgs&, size_t, unsigned,
                                        cudaStream_t);
template void launchForCodec<Bf16Codec>(KernelOp, const ElementwiseArgs&, size_t, unsigned,
                                        cudaStream_t);

}  // namespace hoop::cuda_kernels
