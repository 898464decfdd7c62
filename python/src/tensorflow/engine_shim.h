// The seam between hoop's TensorFlow kernels and hoop's training engine.
//
// The kernels are compiled with the flags the installed TensorFlow was built with (its C++
// standard, its ABI macros), hoop with its own. Nothing of hoop's C++ API crosses this seam: only C
// types and function pointers, so the two sides never have to agree on the layout of a
// std::string, std::function or std::vector. The functions are also what Python's ctypes calls to
// start and stop the engine.
//
// Every submission either returns 0 and later calls `done(context, code, message)` exactly once
// (on the engine's thread, or on the caller's when the request failed after submission but before
// returning), or returns a hoopResult_t other than 0 without calling `done`; hoopTfLastError()
// then says why (per thread).
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HOOP_TF_API __attribute__((visibility("default")))

typedef void (*HoopTfDone)(void* context, int code, const char* message);
// Returns room for the sum of counts[0..ranks) elements, or NULL after writing why into error
// (at most errorCapacity bytes, NUL-terminated).
typedef void* (*HoopTfAllocate)(void* context, const size_t* counts, size_t ranks, char* error,
                                size_t errorCapacity);

// Starts the engine over a communicator (hoopComm_t as an integer) that nothing else uses while
// the engine runs. Collective. Returns 0, or a hoopResult_t with hoopTfLastError() set.
HOOP_TF_API int hoopTfStart(uintptr_t communicator);
// Collective: stops the engine on every rank (work every rank submitted runs first). 0 when none.
HOOP_TF_API int hoopTfStop(void);
HOOP_TF_API int hoopTfRunning(void);
// The engine's communicator size, or 0 when the engine is not running.
HOOP_TF_API int hoopTfSize(void);
HOOP_TF_API const char* hoopTfLastError(void);
// Counters since the engine started (EngineStats): cycles, cache hits, collective calls, fused
// tensors, completed and failed requests, in that order. Returns how many were written.
HOOP_TF_API size_t hoopTfStats(uint64_t* values, size_t capacity);

HOOP_TF_API int hoopTfAllReduce(const char* name, const void* send, void* recv, size_t count,
                                int type, int op, double prescale, double postscale,
                                HoopTfDone done, void* context);
// count tensors agreed on and fused together; `done` is called once, when all of them finished,
// with the first failure if any.
HOOP_TF_API int hoopTfGroupedAllReduce(size_t tensors, const char* const* names,
                                       const void* const* sends, void* const* recvs,
                                       const size_t* counts, int type, int op, double prescale,
                                       double postscale, HoopTfDone done, void* context);
HOOP_TF_API int hoopTfBroadcast(const char* name, void* data, size_t count, int type, int root,
                                HoopTfDone done, void* context);
HOOP_TF_API int hoopTfAllGather(const char* name, const void* send, size_t count, int type,
                                HoopTfAllocate allocate, HoopTfDone done, void* context);
// sendCounts[j] elements to rank j (ranks entries); the output is allocated once the counts every
// rank sends here are known.
HOOP_TF_API int hoopTfAllToAll(const char* name, const void* send, const size_t* sendCounts,
                               size_t ranks, int type, HoopTfAllocate allocate, HoopTfDone done,
                               void* context);
HOOP_TF_API int hoopTfReduceScatter(const char* name, const void* send, void* recv,
                                    size_t recvCount, int type, int op, HoopTfDone done,
                                    void* context);

#ifdef __cplusplus
}
#endif
