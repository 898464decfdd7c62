// The kernel behind DeviceRuntime::addToCounter (device/cuda/cuda_runtime.cc): one thread adds 1
// to a 32-bit counter in mapped host memory. A kernel rather than a stream memory operation
// because a write of a fixed value, recorded into a graph, would write that same value on every
// replay; an atomic add counts each replay.
//
// No CUDA types here (the kernels.h convention). Defined only in CUDA builds (counter.cu), so
// only code under HOOP_HAVE_CUDA may call it.
#pragma once

#include <cstdint>

namespace hoop::cuda {

// *counter += 1 (a system-scope atomic) once `stream` (a cudaStream_t as void*) reaches it.
// `counter` is the device's address of the word (cudaHostGetDevicePointer). A failed launch throws
// hoop::Error(hoopUnhandledCudaError). Graph-capturable.
void addToCounterAsync(uint32_t* counter, void* stream);

}  // namespace hoop::cuda
