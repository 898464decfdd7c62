// The C API's argument checks: each fails with hoopInvalidArgument (or hoopInvalidUsage) naming
// the call and the argument, before anything reaches the communicator.
#pragma once

#include <cstddef>

#include "api/c_api_handle.h"

namespace hoop::capi {

void checkType(hoopDataType_t type, const char* call);
void checkOp(hoopRedOp_t op, const char* call);
// `count` elements of `elementSize` bytes, `multiplier` times over (a buffer with a block per
// rank): a size that fits size_t, not NULL unless empty, and host memory.
void checkBuffer(const void* buffer, size_t count, size_t elementSize, size_t multiplier,
                 const char* name, const char* call);
// A root or peer argument must name a rank of the communicator.
void checkRank(hoopComm* comm, int rank, const char* what, const char* call);
void checkStream(hoopStream_t stream, const char* call);

}  // namespace hoop::capi
