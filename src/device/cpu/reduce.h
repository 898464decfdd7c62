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
//   - fp32, fp64: computed natively with IEEE arithmetic. NaN in sum/prod/avg: if a is NaN the
//     result is a's NaN, made quiet; else if b is NaN, b's, made quiet; a NaN made from numbers
//     (inf - inf, 0 * inf) is the CPU's default NaN. (Pinned because the compiler may swap the
//     operands of a commutative op, and x86 returns the first operand's NaN.)
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
// Kernels: portable C++ (reduce_portable.cc) defines the results; AVX2+F16C (reduce_avx2.cc),
// AVX-512 (reduce_avx512.cc) and aarch64 NEON (reduce_neon.cc) give the same bits faster. The
// level is chosen once per process in reduce.cc from cpuid (x86) or HWCAP (aarch64), and
// HOOP_CPU_ISA=portable|avx2|avx512|neon can lower it (cpu_isa.h).
#pragma once

#include <cstddef>

#include "base/types.h"
#include "device/cpu/cpu_isa.h"

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

// Fused reduce-copy, for recvReduceCopySend: out1[i] = out2[i] = a[i] op b[i] in one pass over
// the inputs (reduce into the user's buffer and the outgoing slot at once). out2 may be null (then
// this is reduce()). Any of out1, out2, a, b may alias each other exactly, never partially.
void reduceCopy(void* out1, void* out2, const void* a, const void* b, size_t count, DataType type,
                RedOp op);

// Same, and for kAvg divides by `divisor` in the same pass, as reduceFinal.
void reduceCopyFinal(void* out1, void* out2, const void* a, const void* b, size_t count,
                     DataType type, RedOp op, size_t divisor);

// reduceCopyFinal / finishAverage with the kernels of one CPU level, whatever activeCpuIsa()
// chose: for tests and benchmarks that compare levels (divisor 1 makes it reduce()/reduceCopy()).
// cpuIsaIncludes(detectCpuIsa(), isa) must hold: the instructions would fault.
void reduceCopyFinalAt(CpuIsa isa, void* out1, void* out2, const void* a, const void* b,
                       size_t count, DataType type, RedOp op, size_t divisor);
void finishAverageAt(CpuIsa isa, void* out, const void* in, size_t count, DataType type, RedOp op,
                     size_t divisor);

}  // namespace hoop
