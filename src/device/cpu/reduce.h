// Element-wise reduction kernels for host memory: what the CPU executor's recvReduceSend /
// recvReduceCopySend primitives run on every slot, so they sit in the data path of every
// collective.
//
// Contract, for every function here:
//   - `count` is in elements. out, a, b (in) point to `count` elements of `type`, each aligned to
//     the element size. out may alias a or b (or both) exactly; partial overlap is not allowed.
//   - type and op are valid enumerators (the C API checks them before they get here).
//   - Results are deterministic and, given the same inputs, bitwise identical on every machine
//     and build: no fast-math, no reassociation, one fixed rounding per element. (fp32/fp64 use
//     the FPU's default environment, round-to-nearest-even; hoop never changes it.)
//
// Semantics per type:
//   - Integers: sum and prod wrap modulo 2^bits (computed in the unsigned type of the same width,
//     so there is no signed-overflow UB). max/min compare as the signed or unsigned type.
//   - fp32, fp64: computed natively with IEEE arithmetic.
//   - fp16, bf16: both inputs are widened to fp32 (exact), the op runs in fp32, and the result is
//     rounded once to the 16-bit type (nearest, ties to even; see half.h).
//   - Floating max/min: NaN propagates: if either input is NaN the result is NaN (the first
//     input's NaN when both are; fp16/bf16 NaNs come out quiet). Signed zeros are ordered
//     -0 < +0: max(-0, +0) = max(+0, -0) = +0, min(-0, +0) = min(+0, -0) = -0. Otherwise the
//     result is the larger (smaller) input, bit for bit.
//   - avg: reduce() treats kAvg as kSum, so partial sums travel the ring; the division by the
//     rank count happens once, in reduceFinal (or finishAverage). Integers: the wrapped sum
//     divided by `divisor`, truncating toward zero (C++ integer division; signed types divide
//     as signed, so -7 / 2 = -3). Floats: the sum divided by `divisor` converted to the compute
//     type (fp32 for fp16/bf16/fp32, fp64 for fp64): a true division, not a multiplication by the
//     reciprocal, so an exact average stays exact. fp16/bf16: sum and division both in fp32,
//     then one rounding to 16 bits.
//   - divisor is the rank count, >= 1; 0 is treated as 1 so a caller bug cannot trap.
//
// These are the portable kernels (auto-vectorized C++). The kernel table is chosen in one place
// in reduce.cc, where explicit AVX2/AVX-512 kernels will be selected at run time.
#pragma once

#include <cstddef>

#include "core/types.h"

namespace hoop {

// out[i] = a[i] op b[i], i < count. out may alias a or b (exactly, not partially). kAvg reduces as
// kSum here: the division happens once, in reduceFinal.
void reduce(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op);

// Same, and for kAvg divides the result by `divisor` (the rank count) in the same pass.
void reduceFinal(void* out, const void* a, const void* b, size_t count, DataType type, RedOp op,
                 size_t divisor);

// out[i] = in[i] / divisor for kAvg (used when a single rank finishes an average); for any other
// op out[i] = in[i] (nothing to do when out == in). out may alias in exactly.
void finishAverage(void* out, const void* in, size_t count, DataType type, RedOp op,
                   size_t divisor);

}  // namespace hoop
