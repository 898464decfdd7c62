// Element-wise kernels for device memory, launched on a CUDA stream: what the CUDA executor's
// primitives (recvReduceSend, recvReduceCopySend, recvCopySend, copySend) will run on every slot.
// The same contract and the same bits as the CPU kernels (device/cpu/reduce.h), so a collective
// gives identical results whichever executor ran each step.
//
// This header has no CUDA types: code built without CUDA can include it. A stream is passed as
// CudaStream, a cudaStream_t cast to void* (nullptr is the legacy default stream). Every call only
// enqueues work: it returns before the kernel runs, and the buffers must stay valid until the
// stream reaches it. Launches are graph-capturable (no synchronisation, no allocation).
//
// Contract, beyond reduce.h's:
//   - every pointer is device memory of the current device (or memory the device can address,
//     such as a peer's mapped IPC buffer), aligned to the element size. A misaligned pointer is
//     hoopInvalidArgument here, before the launch: on the GPU it would be a sticky error that
//     ends the context.
//   - pointers may have any alignment beyond that: where all of them sit at the same offset
//     modulo 16 the body runs on 16-byte vectors, with scalar elements before and after;
//     otherwise element by element.
//   - bitwise identical to src/device/cpu's portable kernels for the same inputs, including the
//     NaN rules. One difference is deliberate: a NaN made from numbers (inf - inf, 0 * inf) is
//     x86's default NaN (sign set, quiet: fp32 0xffc00000), which is what the CPU kernels give on
//     x86; on another CPU architecture the CPU kernels give that CPU's default NaN instead.
//   - a failed launch (no device, bad stream) throws hoop::Error(hoopUnhandledCudaError) with
//     CUDA's message. Errors of the running kernel surface later, on the stream.
//
// In a build without CUDA (HOOP_HAVE_CUDA=0) these throw hoopInvalidUsage: "built without CUDA".
#pragma once

#include <cstddef>

#include "base/types.h"

namespace hoop::cuda {

using CudaStream = void*;

// out1[i] = a[i] op b[i], also into out2[i] when out2 is not null, in one pass; for kAvg divided
// by `divisor` (the rank count; 0 and 1 mean no division). reduceCopyFinal in reduce.h.
void reduceCopyFinalAsync(void* out1, void* out2, const void* a, const void* b, size_t count,
                          DataType type, RedOp op, size_t divisor, CudaStream stream);

// out[i] = in[i] / divisor for kAvg; a copy (nothing when out == in) for any other op.
void finishAverageAsync(void* out, const void* in, size_t count, DataType type, RedOp op,
                        size_t divisor, CudaStream stream);

// out[i] = in[i] * factor with ProdOp's rules (the CPU's scale(), device/cpu/scale.h): the factor
// is one element of `type`, read from device memory by the kernel when `factorOnDevice` is set,
// else copied from `factorValue` (host memory) at the launch. out and in are equal or apart.
void scaleAsync(void* out, const void* in, size_t count, DataType type, const void* factorOnDevice,
                const void* factorValue, CudaStream stream);

// dst[0, bytes) = src[0, bytes); no overlap. A kernel, not cudaMemcpyAsync, so a later fused
// primitive can share its loop; 16-byte vectors when dst and src agree modulo 16.
void copyAsync(void* dst, const void* src, size_t bytes, CudaStream stream);

// Whether this build has the kernels (HOOP_WITH_CUDA found nvcc).
bool kernelsBuilt();

}  // namespace hoop::cuda
